"""The oracle attention backend: the definition of right, in plain torch.

It follows the rules of ``AttentionImpl.forward`` literally: write the new keys and
values to their slots, gather each request's whole context through its block table,
score every query against every context position, mask what the rules exclude, and
take the softmax-weighted sum, one request at a time (a padded batch would spend most
of its work on padding when a long prefill shares a batch with decodes). It takes no
shortcut that would need an argument to be believed correct. With
``compute_dtype=torch.float64`` it is the tolerance reference for every kernel.
"""

from __future__ import annotations

import torch

from conformance.contract.attention import (
    AttentionBackend,
    AttentionImpl,
    AttentionMetadata,
    AttentionSelectorConfig,
)

_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
_KV_CACHE_DTYPES = ("auto", "float32", "bfloat16", "float16")


class OracleAttentionImpl(AttentionImpl):
    def __init__(self, *args, compute_dtype: torch.dtype | None = None, **kwargs) -> None:
        """``compute_dtype``: the dtype scores and sums are computed in (default: the
        query's, at least float32); outputs are cast back to ``output``'s dtype."""
        super().__init__(*args, **kwargs)
        self.compute_dtype = compute_dtype

    def forward(self, query, key, value, kv_cache, metadata: AttentionMetadata, output):
        n = metadata.num_actual_tokens
        key_cache = kv_cache[0].view(-1, self.num_kv_heads, self.head_size)
        value_cache = kv_cache[1].view(-1, self.num_kv_heads, self.head_size)
        slots = metadata.slot_mapping[:n].long()
        real = slots >= 0
        key_cache[slots[real]] = key[:n][real].to(key_cache.dtype)
        value_cache[slots[real]] = value[:n][real].to(value_cache.dtype)

        # fp16/bf16 inputs are computed in fp32 unless told otherwise: the oracle is
        # the yardstick, so it should not add rounding of its own.
        dtype = self.compute_dtype or torch.promote_types(query.dtype, torch.float32)
        block_size = kv_cache.shape[2]
        group = self.num_heads // self.num_kv_heads
        starts = metadata.query_start_loc.tolist()
        for request, seq_len in enumerate(metadata.seq_lens.tolist()):
            start, end = starts[request], starts[request + 1]
            if end == start:
                continue
            # The request's context, positions 0 .. seq_len-1, through its block table;
            # slots past it are never read, whatever they hold.
            key_pos = torch.arange(seq_len, device=query.device)
            slots = metadata.block_table[request].long()[key_pos // block_size] * block_size + key_pos % block_size
            k, v = key_cache[slots].to(dtype), value_cache[slots].to(dtype)
            # Query i sits at position context_len + i; query head h = n * group + g
            # reads KV head n, so heads are viewed as (n, g).
            query_pos = key_pos[seq_len - (end - start):]
            q = query[start:end].view(end - start, self.num_kv_heads, group, self.head_size).to(dtype)
            allowed = key_pos[None, :] <= query_pos[:, None]
            if self.sliding_window is not None:
                allowed &= query_pos[:, None] - key_pos[None, :] < self.sliding_window

            scores = torch.einsum("qngd,knd->ngqk", q, k) * self.scale
            if self.logits_soft_cap is not None:
                scores = self.logits_soft_cap * torch.tanh(scores / self.logits_soft_cap)
            scores = scores.masked_fill(~allowed, float("-inf"))
            out = torch.einsum("ngqk,knd->qngd", scores.softmax(dim=-1), v)
            output[start:end] = out.flatten(1, 2).to(output.dtype)
        output[n:] = 0
        return output


class OracleAttentionBackend(AttentionBackend):
    """Supports every dtype, head size, block size, GQA/MQA, sliding window and
    logits soft cap: it is the yardstick, so it refuses only what it cannot store."""

    @staticmethod
    def get_name() -> str:
        return "ORACLE"

    @staticmethod
    def get_impl_cls() -> type[AttentionImpl]:
        return OracleAttentionImpl

    @classmethod
    def validate_configuration(cls, config: AttentionSelectorConfig) -> list[str]:
        reasons = []
        if config.dtype not in _DTYPES:
            reasons.append(f"dtype {config.dtype} (supported: {_DTYPES})")
        if config.kv_cache_dtype not in _KV_CACHE_DTYPES:
            reasons.append(f"kv-cache dtype {config.kv_cache_dtype!r} (supported: {_KV_CACHE_DTYPES})")
        if config.head_size <= 0:
            reasons.append(f"head size {config.head_size} (must be positive)")
        if config.block_size <= 0:
            reasons.append(f"block size {config.block_size} (must be positive)")
        return reasons + config.non_positive_features()
