"""The kit's capability declaration of a vLLM platform, derived from what vLLM declares.

vLLM has no single declaration: the pieces live on the platform (``supported_dtypes``,
``supported_quantization``) and on the attention backend it selects
(``supported_dtypes``, ``supported_kv_cache_dtypes``, ``get_supported_head_sizes``,
``supports_block_size``, ``supports_sliding_window``). The kit asks vLLM each question
it can answer and keeps only the values the kit knows how to test. Where vLLM states
nothing, the module says what it assumes and why.
"""

from __future__ import annotations

import torch

from conformance.bridges.vllm.attention import vllm_backend_class
from conformance.contract.capabilities import (
    KNOWN_DTYPES,
    KNOWN_KV_CACHE_DTYPES,
    PlatformCapabilities,
)

#: Block sizes the kit asks the backend about (vLLM's ``supports_block_size``): the
#: powers of two vLLM's engine picks its cache blocks from in practice.
CANDIDATE_BLOCK_SIZES = (8, 16, 32, 64, 128)
#: The largest world the kit's suites run. vLLM declares no tensor-parallel limit: its
#: executor starts a rank per device, and gloo ranks share one host device.
KIT_MAX_WORLD_SIZE = 4
#: vLLM has no per-platform list of model architectures (every platform accepts every
#: registered model); the kit declares the one its suites and engine run.
KIT_ARCHITECTURES = ("LlamaForCausalLM",)


def selector_config(head_size: int, dtype: torch.dtype, block_size: int | None,
                    kv_cache_dtype: str = "auto", sliding_window: bool = False):
    """vLLM's ``AttentionSelectorConfig`` for a decoder layer without MLA, sinks or
    sparsity: the only kind the kit's contract describes."""
    from vllm.v1.attention.selector import AttentionSelectorConfig

    return AttentionSelectorConfig(head_size=head_size, dtype=dtype,
                                   kv_cache_dtype=kv_cache_dtype, block_size=block_size,
                                   has_sliding_window=sliding_window)


def default_backend(vllm_platform) -> type:
    """The attention backend class vLLM's platform selects for a plain decoder layer,
    imported by the name it returns, as vLLM's selector does."""
    dtype = vllm_platform.supported_dtypes[0]
    return vllm_backend_class(vllm_platform.get_attn_backend_cls(None, selector_config(128, dtype, None), None))


def derive_capabilities(vllm_platform) -> PlatformCapabilities:
    backend = default_backend(vllm_platform)
    dtypes = tuple(d for d in vllm_platform.supported_dtypes
                   if d in KNOWN_DTYPES and backend.supports_dtype(d))
    head_sizes = tuple(h for h in backend.get_supported_head_sizes() if h % 8 == 0)
    block_sizes = tuple(b for b in CANDIDATE_BLOCK_SIZES if backend.supports_block_size(b))
    kv_cache_dtypes = tuple(k for k in backend.supported_kv_cache_dtypes
                            if k in KNOWN_KV_CACHE_DTYPES)
    ranks_share_a_device = vllm_platform.dist_backend == "gloo"
    max_world_size = KIT_MAX_WORLD_SIZE if ranks_share_a_device else vllm_platform.device_count()
    features = {"sliding_window"} if backend.supports_sliding_window() else set()
    if max_world_size > 1:
        features.add("tensor_parallel")
    return PlatformCapabilities(
        dtypes=dtypes, head_sizes=head_sizes, block_sizes=block_sizes,
        kv_cache_dtypes=kv_cache_dtypes, max_world_size=max_world_size,
        features=frozenset(features), model_architectures=KIT_ARCHITECTURES,
        quantizations=tuple(vllm_platform.supported_quantization),
    )
