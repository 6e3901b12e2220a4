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

    def non_positive_features(self) -> list[str]:
        """Why the sliding window or soft cap lies outside every declaration (each must
        be positive, ``attention.config.refuses_undeclared``); empty when neither does."""
        return [f"{name} {value} (must be positive)"
                for name, value in (("sliding window", self.sliding_window), ("logits soft cap", self.logits_soft_cap))
                if value is not None and value <= 0]


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

        The attention of query token ``i`` of a request, at position
        ``context_len + i``, is the softmax-weighted mean of the values at positions
        ``0 .. context_len + i`` of the same request, with scores ``scale * q.k``;
        query head ``h`` reads KV head ``h // (num_heads // num_kv_heads)``. The
        kit's oracle computes exactly this in float32; "matches the oracle" means
        within the dtype's tolerance of it. With a cache in a declared KV-cache dtype
        other than the model's, keys and values are cast to the cache dtype as they
        are written, the oracle reads them back from that cache, and the tolerance is
        that of the coarser of the two dtypes.

        Rule ``attention.forward.prefill``: requests with no context (variable lengths,
        causal) match the oracle: query ``i`` attends to positions ``0 .. i`` of its
        own request only.

        Rule ``attention.forward.decode``: requests of one new token after a context
        that spans several shuffled blocks (lengths at and around block boundaries)
        match the oracle.

        Rule ``attention.forward.mixed``: prefill, chunked-prefill and decode requests
        in one call, with padding tokens after the real ones, match the oracle. Batches
        of every kind match it with the cache in each declared KV-cache dtype, the
        model in each declared dtype other than the cache's. They match it with
        ``query``, ``key`` and ``value`` non-contiguous views of one fused projection,
        as an engine's attention layer passes them (``qkv.split`` along the last dim,
        viewed as heads: the token stride is the whole row). They match it with
        ``query`` and ``key`` tensors of their own beside a ``value`` still a view of
        the projection, as a layer that normalises queries and keys per head passes
        them (key and value then differ in strides). They match it with ``query``,
        ``key`` and ``value`` views of a projection laid out per KV head
        (``[tokens, kv_heads, group + 2, head_size]``, as GPT-NeoX's and Falcon's
        layers split it), whose heads are not packed (a head stride other than
        ``head_size``).

        Rule ``attention.features.sliding_window``: with a sliding window ``w``, query
        at position ``p`` attends only to positions ``p - w + 1 .. p``, in prefill,
        chunked prefill and decode alike.

        Rule ``attention.features.logits_soft_cap``: with a soft cap ``c``, scores
        become ``c * tanh(s / c)`` before the softmax.

        Rule ``attention.kv_cache.write``: after ``forward``, every real token's key and
        value are in its slot, exactly (cast to the cache dtype, in each declared
        KV-cache dtype); padding tokens (slot -1) and every other slot are left as
        they were. Keys and values that are non-contiguous views of one fused
        projection (as an engine's attention layer passes them) are written as
        contiguous ones are. So is a key of its own beside a value still such a
        view. So are keys and values viewed from a projection laid out per KV head,
        whose heads are not packed. A token whose slot is -1 is padding wherever it
        lies, inside ``num_actual_tokens`` too (as vLLM's drafter marks its tokens past
        the model's length), and changes no slot.

        Rule ``attention.forward.output_in_place``: ``forward`` writes the result into
        the ``output`` it is given (``[num_tokens, num_heads, head_size]``) and
        returns that very tensor.

        Rule ``attention.forward.inputs_unchanged``: ``forward`` leaves ``query``,
        ``key`` and ``value`` as they were, bit for bit, on batches of every kind and
        with the cache in each declared KV-cache dtype (the engine's layers read them
        again: the residual path, the next layer's norm).

        Rule ``attention.forward.successive_calls``: one impl serves every step of its
        layer, so on every call of a run of engine-like steps (decodes whose lengths
        grow a token a step, a batch that grows, shrinks and grows again, a step that
        repeats an earlier step's shapes with new values) it matches the oracle and
        writes every real token's key and value into its slot: nothing a call leaves
        behind, such as a plan or a buffer made for an earlier batch, may change a
        later call's result or cache writes; and an earlier call's output and cache
        keep their values after later calls on other output and cache tensors.

        Rule ``attention.kv_cache.unowned_slots``: the result does not depend on cache
        slots no request owns (the unused tail of a request's last block, blocks of no
        request), which may hold anything: with NaN in the unused tail of every
        request's last block it is what it is with zeros there, within the dtype's
        tolerance. A backend that needs those tails zeroed declares
        ``zeroed_cache_blocks``, and the engine then zeroes each block before a
        request first uses it.

        Rule ``attention.numerics.deterministic``: the same batch on the same cache
        twice gives bitwise the same output and cache.

        Rule ``attention.numerics.fp16_long_context``: in fp16, positive values near
        1000 over a context of hundreds of tokens with near-uniform attention match
        the oracle: the output is a weighted mean of the values and fits in fp16,
        although their unnormalised weighted sum (about 1000 times the number of
        tokens) exceeds fp16's range.
        """


class AttentionBackend(abc.ABC):
    """A family of attention kernels and the KV-cache layout they read."""

    @staticmethod
    @abc.abstractmethod
    def get_name() -> str:
        """A short, unique name (appears in records and the support matrix): see
        ``validate_configuration``."""

    @staticmethod
    @abc.abstractmethod
    def get_impl_cls() -> type[AttentionImpl]:
        """The ``AttentionImpl`` subclass that computes attention for this backend."""

    @staticmethod
    def get_kv_cache_shape(
        num_blocks: int, block_size: int, num_kv_heads: int, head_size: int
    ) -> tuple[int, ...]:
        """Logical shape of one layer's KV cache (see the module docstring).

        Rule ``attention.kv_cache.shape``: ``get_kv_cache_shape(num_blocks, block_size,
        num_kv_heads, head_size)`` is ``(2, num_blocks, block_size, num_kv_heads,
        head_size)`` for every declared head size and block size.
        """
        return (2, num_blocks, block_size, num_kv_heads, head_size)

    @classmethod
    @abc.abstractmethod
    def validate_configuration(cls, config: AttentionSelectorConfig) -> list[str]:
        """Human-readable reasons ``config`` is unsupported (empty when supported).

        Rule ``attention.config.accepts_declared``: ``validate_configuration`` returns
        no reasons for any combination of declared head size, dtype and block size
        (with each declared optional feature on), and the backend names itself
        (``get_name()`` is a non-empty str).

        Rule ``attention.config.refuses_undeclared``: a configuration outside the
        declared set is refused: by the platform when it selects a backend
        (``get_attn_backend_cls`` raises ``ValueError``, so no engine can build the
        layer), or else by the backend, whose ``validate_configuration`` returns a
        non-empty reason and whose layer, built anyway, raises ``ValueError`` from
        ``forward`` instead of computing a wrong answer. A sliding window or logits
        soft cap that is not positive lies outside every declaration, the feature
        declared or not.
        """
