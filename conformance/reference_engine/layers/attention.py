"""The attention layer: the model's side of the ``AttentionBackend`` contract."""

from __future__ import annotations

import torch
from torch import nn

from conformance.contract.attention import AttentionBackend, AttentionMetadata


class Attention(nn.Module):
    """Owns one layer's KV cache (bound by the model runner) and hands the batch to
    the backend's ``AttentionImpl``; the model never sees the cache layout."""

    def __init__(
        self,
        backend: type[AttentionBackend],
        num_heads: int,
        head_size: int,
        num_kv_heads: int,
        **impl_kwargs,
    ) -> None:
        super().__init__()
        self.num_heads, self.head_size, self.num_kv_heads = num_heads, head_size, num_kv_heads
        self.impl = backend.get_impl_cls()(
            num_heads, head_size, head_size**-0.5, num_kv_heads, **impl_kwargs
        )
        self.kv_cache = torch.empty(0)

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, metadata: AttentionMetadata
    ) -> torch.Tensor:
        output = torch.empty(q.shape, dtype=q.dtype, device=q.device)
        self.impl.forward(q, k, v, self.kv_cache, metadata, output)
        return output.view(q.shape[0], -1)
