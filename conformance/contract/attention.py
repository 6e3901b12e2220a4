"""The attention contract: ``AttentionBackend``, ``AttentionImpl``, ``AttentionMetadata``
and ``AttentionSelectorConfig``.

Shapes follow vLLM's v1 backends. A batch is ragged: requests are laid end to end in
``query`` (``[num_tokens, num_heads, head_size]``), ``query_start_loc`` marks where
each request's new tokens start, and ``seq_lens`` counts each request's context plus
new tokens. The paged KV cache has the logical shape
``(2, num_blocks, block_size, num_kv_heads, head_size)`` (keys, then values); the
token at position ``p`` of request ``r`` lives in slot
``block_table[r, p // block_size] * block_size + p % block_size``.
"""

from __future__ import annotations

import abc
import dataclasses

import torch


@dataclasses.dataclass(frozen=True)
class AttentionSelectorConfig:
    """What the engine asks of an attention backend (``get_attn_backend_cls``' input)."""

    head_size: int
    dtype: torch.dtype
    block_size: int
    kv_cache_dtype: str = "auto"
    sliding_window: int | None = None
    logits_soft_cap: float | None = None


@dataclasses.dataclass
class AttentionMetadata:
    """Per-batch metadata shared by every attention layer of one forward pass.

    ``num_actual_tokens`` counts real tokens; rows of ``query``/``key``/``value``
    beyond it are padding, and so is every token whose ``slot_mapping`` entry is -1:
    a backend must not write such tokens into the cache.
    """

    query_start_loc: torch.Tensor  # [num_reqs + 1] int32, cumulative query offsets
    seq_lens: torch.Tensor  # [num_reqs] int32, context + new tokens per request
    block_table: torch.Tensor  # [num_reqs, max_blocks_per_req] int32
    slot_mapping: torch.Tensor  # [num_tokens] int64, -1 = padding
    max_query_len: int
    max_seq_len: int
    num_actual_tokens: int

    @property
    def num_reqs(self) -> int:
        return self.seq_lens.shape[0]


class AttentionImpl(abc.ABC):
    """One attention layer's computation over the paged KV cache."""

    def __init__(
        self,
        num_heads: int,
        head_size: int,
        scale: float,
        num_kv_heads: int,
        sliding_window: int | None = None,
        logits_soft_cap: float | None = None,
        kv_cache_dtype: str = "auto",
    ) -> None:
        if num_heads % num_kv_heads:
            raise ValueError(
                f"num_heads ({num_heads}) must be a multiple of num_kv_heads ({num_kv_heads})"
            )
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = scale
        self.num_kv_heads = num_kv_heads
        self.sliding_window = sliding_window
        self.logits_soft_cap = logits_soft_cap
        self.kv_cache_dtype = kv_cache_dtype

    @abc.abstractmethod
    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        kv_cache: torch.Tensor,
        metadata: AttentionMetadata,
        output: torch.Tensor,
    ) -> torch.Tensor:
        """Write the new keys and values into ``kv_cache`` and attention into ``output``.

        Rules: every real token's key and value land in its slot (slot -1 is skipped);
        query token ``i`` of a request, at position ``context_len + i``, attends
        causally to positions ``0 .. context_len + i`` of the same request, limited to
        the last ``sliding_window`` positions when set, with scores
        ``scale * q.k`` (soft-capped as ``cap * tanh(s / cap)`` when set); query head
        ``h`` reads KV head ``h // (num_heads // num_kv_heads)``; the result is written
        in place into ``output`` (``[num_tokens, num_heads, head_size]``), which is
        also returned. ``query``, ``key`` and ``value`` are left unmodified: the
        engine's layers read them again (the residual path, the next layer's norm).
        One impl serves every step of its layer, so a call's result depends on its
        own arguments only, never on a plan or buffer kept from an earlier call.
        Cache slots no request owns (the unused tail of a request's last block, and
        blocks of no request) may hold anything, NaN included, and the result must not
        depend on them, unless the platform declares ``zeroed_cache_blocks``: the
        engine then zeroes each block before a request first uses it.
        """


class AttentionBackend(abc.ABC):
    """A family of attention kernels and the KV-cache layout they read."""

    @staticmethod
    @abc.abstractmethod
    def get_name() -> str:
        """A short, unique name (appears in records and the support matrix)."""

    @staticmethod
    @abc.abstractmethod
    def get_impl_cls() -> type[AttentionImpl]:
        """The ``AttentionImpl`` subclass that computes attention for this backend."""

    @staticmethod
    def get_kv_cache_shape(
        num_blocks: int, block_size: int, num_kv_heads: int, head_size: int
    ) -> tuple[int, ...]:
        """Logical shape of one layer's KV cache (see the module docstring)."""
        return (2, num_blocks, block_size, num_kv_heads, head_size)

    @classmethod
    @abc.abstractmethod
    def validate_configuration(cls, config: AttentionSelectorConfig) -> list[str]:
        """Human-readable reasons ``config`` is unsupported (empty when supported).

        Rule: an ``AttentionImpl`` of this backend is only ever built for a
        configuration this accepts; asked to compute outside it, the backend raises
        ``ValueError`` instead of returning a wrong answer.
        """
