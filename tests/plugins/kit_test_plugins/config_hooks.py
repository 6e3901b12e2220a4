"""Plugins whose config hooks accept what they cannot run."""

from kit_test_plugins import TestPlatform


class AnyArchitecturePlatform(TestPlatform):
    @classmethod
    def verify_model_arch(cls, arch: str) -> None:
        """Accepts every architecture."""


class AnyQuantizationPlatform(TestPlatform):
    @classmethod
    def verify_quantization(cls, quant) -> None:
        """Accepts every quantization."""


class RefusingSecondBlockSizePlatform(TestPlatform):
    """Refuses its own second declared block size: a paging path never wired up."""

    @classmethod
    def check_and_update_config(cls, config) -> None:
        if config.block_size == cls.capabilities.block_sizes[1]:
            raise ValueError(f"block size {config.block_size} is not supported")
        super().check_and_update_config(config)


class AnyKvCacheDtypePlatform(TestPlatform):
    """Lets any KV-cache dtype through its config hook: a cache dtype it never
    implemented reaches the kernels."""

    @classmethod
    def check_and_update_config(cls, config) -> None:
        declared = config.kv_cache_dtype
        config.kv_cache_dtype = cls.capabilities.kv_cache_dtypes[0]
        try:
            super().check_and_update_config(config)
        finally:
            config.kv_cache_dtype = declared
