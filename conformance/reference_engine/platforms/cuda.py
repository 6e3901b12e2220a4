"""The ``cuda`` platform: NVIDIA GPUs through ``torch.cuda`` and NCCL."""

from __future__ import annotations

import torch

from conformance.contract.attention import AttentionSelectorConfig
from conformance.contract.capabilities import (
    DeviceCapability,
    PlatformCapabilities,
)
from conformance.contract.platform import Platform


class CudaPlatform(Platform):
    device_name = "cuda"
    device_type = "cuda"
    dispatch_key = "CUDA"
    dist_backend = "nccl"
    device_control_env_var = "CUDA_VISIBLE_DEVICES"
    custom_ops_module = "conformance.reference_engine.kernels.elementwise"
    capabilities = PlatformCapabilities(
        dtypes=(torch.float32, torch.bfloat16, torch.float16),
        head_sizes=(32, 64, 128, 256),
        block_sizes=(16, 32, 64, 128),
        kv_cache_dtypes=("auto",),
        max_world_size=8,
        features=frozenset({"tensor_parallel", "sliding_window", "logits_soft_cap"}),
    )

    @classmethod
    def is_available(cls) -> bool:
        return torch.cuda.is_available()

    @classmethod
    def device_count(cls) -> int:
        return torch.cuda.device_count()

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        torch.cuda.set_device(device)

    @classmethod
    def current_device(cls) -> int:
        return torch.cuda.current_device()

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return torch.cuda.get_device_name(device_id)

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        return DeviceCapability(*torch.cuda.get_device_capability(device_id))

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return torch.cuda.get_device_properties(device_id).total_memory

    @classmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        return torch.cuda.mem_get_info(device_id)

    @classmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        return torch.cuda.memory_allocated(device_id)

    @classmethod
    def synchronize(cls, device_id: int | None = None) -> None:
        torch.cuda.synchronize(device_id)

    @classmethod
    def Event(cls, enable_timing: bool = False) -> torch.cuda.Event:
        return torch.cuda.Event(enable_timing=enable_timing)

    @classmethod
    def Stream(cls) -> torch.cuda.Stream:
        return torch.cuda.Stream()

    @classmethod
    def empty_cache(cls) -> None:
        torch.cuda.empty_cache()

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        torch.cuda.manual_seed_all(seed)

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        return True

    @classmethod
    def get_attn_backend_cls(cls, config: AttentionSelectorConfig) -> str:
        cls.refuse_undeclared_attention(config)
        return "conformance.reference_engine.attention.triton_attn.TritonAttentionBackend"

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return "conformance.reference_engine.distributed.torch_communicator.TorchDistributedCommunicator"
