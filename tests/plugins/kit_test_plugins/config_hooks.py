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
