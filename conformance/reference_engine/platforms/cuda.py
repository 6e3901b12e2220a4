"""The ``cuda`` platform: NVIDIA GPUs through ``torch.cuda`` and NCCL.

Its device runtime is ``torch.cuda``'s, forwarded by ``TorchDevicePlatform``; what is
left here is what only this platform knows: identity, capabilities, components.
"""

from __future__ import annotations

import torch

from conformance.contract.attention import AttentionSelectorConfig
from conformance.contract.capabilities import PlatformCapabilities
from conformance.contract.torch_device import TorchDevicePlatform


class CudaPlatform(TorchDevicePlatform):
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
    def get_attn_backend_cls(cls, config: AttentionSelectorConfig) -> str:
        cls.refuse_undeclared_attention(config)
        return "conformance.reference_engine.attention.triton_attn.TritonAttentionBackend"

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return "conformance.reference_engine.distributed.torch_communicator.TorchDistributedCommunicator"
