"""Platforms for the author kit's tests, registered through a dist-info the tests write."""

from conformance import TorchDevicePlatform
from conformance.reference_engine.platforms.cpu import CpuPlatform


class TorchCpuPlatform(TorchDevicePlatform):
    """``TorchDevicePlatform`` on ``torch.cpu`` with nothing of its own but identity,
    capabilities and components (the cpu platform's): whatever torch.cpu lacks must
    fail its contract, naming what is missing."""

    device_name = "torch-cpu"
    device_type = "cpu"
    dispatch_key = "CPU"
    dist_backend = "gloo"
    capabilities = CpuPlatform.capabilities

    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        cls.refuse_undeclared_attention(config)
        return "conformance.reference_engine.attention.cpu_attn.CpuAttentionBackend"

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return CpuPlatform.get_device_communicator_cls()

    @classmethod
    def plugin(cls) -> str:
        return f"{cls.__module__}.{cls.__qualname__}"
