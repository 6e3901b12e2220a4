"""Plugins whose config hooks accept what they cannot run."""

import dataclasses

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


class RangeCheckedDeclarationPlatform(TestPlatform):
    """Checks head and block sizes against the declared range, not the declared set:
    a size below or between the declared ones is selected, and its config hook rounds
    an undeclared block size up to a declared one instead of refusing it."""

    @classmethod
    def refuse_undeclared_attention(cls, config) -> None:
        caps = cls.capabilities
        if config.head_size > max(caps.head_sizes) or config.block_size > max(caps.block_sizes):
            raise ValueError(f"{cls.device_name}: head size or block size above the declared range")
        super().refuse_undeclared_attention(
            dataclasses.replace(config, head_size=caps.head_sizes[0], block_size=caps.block_sizes[0]))

    @classmethod
    def check_and_update_config(cls, config) -> None:
        larger = [size for size in sorted(cls.capabilities.block_sizes) if size >= config.block_size]
        if not larger:
            raise ValueError(f"{cls.device_name}: block size {config.block_size} above the declared range")
        config.block_size = larger[0]
        super().check_and_update_config(config)
