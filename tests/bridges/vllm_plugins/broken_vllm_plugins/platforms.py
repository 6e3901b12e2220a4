"""The platforms: vLLM's ``CpuPlatform`` subclassed as a vendor patches it, one bug each."""

from __future__ import annotations

import torch
from vllm.platforms.cpu import CpuPlatform


class FaithfulPlatform(CpuPlatform):
    """vLLM's CPU platform, renamed only: the kit must find exactly what it finds in
    ``vllm:cpu``."""


class StockNamedBackendPlatform(CpuPlatform):
    """Selects a patched CPU_ATTN subclass that keeps the stock ``get_name()``."""

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        super().get_attn_backend_cls(selected_backend, attn_selector_config, num_heads)
        return "broken_vllm_plugins.attention.WrongScaleBackend"


class UnimportableBackendPlatform(CpuPlatform):
    """Names a backend class its package does not have (a typo in a qualname)."""

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        return "broken_vllm_plugins.attention.NoSuchBackend"


class BlockSizeHookPlatform(CpuPlatform):
    """Its config hook turns a request for blocks of 64 into blocks of 128."""

    @classmethod
    def check_and_update_config(cls, vllm_config) -> None:
        super().check_and_update_config(vllm_config)
        if vllm_config.cache_config.block_size == 64:
            vllm_config.cache_config.block_size = 128


class DtypeHookPlatform(CpuPlatform):
    """Its config hook silently runs a float32 model in bfloat16."""

    @classmethod
    def check_and_update_config(cls, vllm_config) -> None:
        super().check_and_update_config(vllm_config)
        if vllm_config.model_config.dtype == torch.float32:
            vllm_config.model_config.dtype = torch.bfloat16


class AllGatherDimsPlatform(CpuPlatform):
    """Its communicator's ``all_gather`` is wrong along any dim but 0."""

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return "broken_vllm_plugins.communicator.AllGatherDimsCommunicator"
