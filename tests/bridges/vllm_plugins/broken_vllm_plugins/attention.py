"""A vendor's patch of vLLM's CPU attention backend: the subclass keeps the stock name
(``CPU_ATTN``), as patches usually do, and scales the scores wrongly."""

from __future__ import annotations

from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend, CPUAttentionBackendImpl


class WrongScaleImpl(CPUAttentionBackendImpl):
    def __init__(self, num_heads, head_size, scale, *args, **kwargs) -> None:
        super().__init__(num_heads, head_size, scale * 1.25, *args, **kwargs)


class WrongScaleBackend(CPUAttentionBackend):
    @staticmethod
    def get_impl_cls() -> type[WrongScaleImpl]:
        return WrongScaleImpl
