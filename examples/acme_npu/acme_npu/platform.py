"""The Acme NPU platform: identity, what it declares, and where torch.cpu falls short.

The device runtime comes from ``TorchDevicePlatform`` (forwarded to ``torch.cpu``);
``TorchDevicePlatform.missing_runtime()`` names what ``torch.cpu`` lacks, and this
class overrides exactly those methods.
"""

from __future__ import annotations

import torch

from acme_npu import host_runtime
from conformance import AttentionSelectorConfig, PlatformCapabilities, TorchDevicePlatform


class AcmeNpuPlatform(TorchDevicePlatform):
    device_name = "acme-npu"
    device_type = "cpu"
    dispatch_key = "CPU"
    dist_backend = "gloo"
    # Honest declarations: no sliding window or logits soft cap (the kernel has
    # neither, so their contracts are not_supported), tensor parallel over 2 ranks.
    capabilities = PlatformCapabilities(
        dtypes=(torch.float32, torch.bfloat16, torch.float16),
        head_sizes=(64, 128),
        block_sizes=(16, 32),
        max_world_size=2,
        features=frozenset({"tensor_parallel"}),
    )

    @classmethod
    def get_attn_backend_cls(cls, config: AttentionSelectorConfig) -> str:
        cls.refuse_undeclared_attention(config)
        return "acme_npu.attention.AcmeAttentionBackend"

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return "acme_npu.communicator.AcmeGlooCommunicator"

    # -- what torch.cpu lacks -----------------------------------------------------
    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return host_runtime.device_name()

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return host_runtime.total_and_available()[0]

    @classmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        total, available = host_runtime.total_and_available()
        return available, total

    @classmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        return host_runtime.bytes_in_use()

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        torch.manual_seed(seed)  # the emulator draws from the host generator

    @classmethod
    def Event(cls, enable_timing: bool = False) -> host_runtime.TimedEvent:
        return host_runtime.TimedEvent(enable_timing)
