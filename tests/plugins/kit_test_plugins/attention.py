"""Platforms whose attention backend carries one bug each.

Each backend is the cpu backend with one rule of ``AttentionImpl.forward`` broken,
mostly by handing it altered metadata or parameters, so the bug is the only
difference. ``TritonInterpretedPlatform`` is correct: the cuda platform's Triton
backend, run on CPU tensors under ``TRITON_INTERPRET=1``.
"""

import dataclasses

import torch
from kit_test_plugins import TestPlatform

from conformance.reference_engine.attention.cpu_attn import CpuAttentionBackend, CpuAttentionImpl


class AttentionTestPlatform(TestPlatform):
    """The cpu platform, with the attention backend named by ``attention_backend``."""

    attention_backend: str

    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        cls.refuse_undeclared_attention(config)
        return cls.attention_backend


class TritonInterpretedPlatform(AttentionTestPlatform):
    """The cuda platform's Triton backend on CPU tensors, declaring two values of each
    dimension the covering batches pair up: the interpreter runs every program
    instance in Python, and the cpu declaration's batches would take it minutes. The
    batches' lengths still cross its key tiles and cache blocks; the cuda platform's
    whole declaration is checked on a GPU."""

    attention_backend = "conformance.reference_engine.attention.triton_attn.TritonAttentionBackend"
    capabilities = dataclasses.replace(TestPlatform.capabilities, dtypes=(torch.float32, torch.float16),
                                       head_sizes=(32, 64), block_sizes=(16, 32))


class TritonOpsInterpretedPlatform(TritonInterpretedPlatform):
    """Also the cuda platform's Triton RMSNorm, RoPE and SiLU-and-mul in the model."""

    custom_ops_module = "conformance.reference_engine.kernels.elementwise"


class CastCacheTestPlatform(AttentionTestPlatform):
    """Also declares a KV cache in every dtype the kit knows, besides the model's:
    the backends that go wrong only where they cast keys and values for the cache
    need one to show it."""

    capabilities = dataclasses.replace(TestPlatform.capabilities,
                                       kv_cache_dtypes=("auto", "float32", "bfloat16", "float16"))


def _broken(impl: type[CpuAttentionImpl], base: type[AttentionTestPlatform] = AttentionTestPlatform
            ) -> tuple[type, type]:
    """The backend building ``impl`` and the platform (a ``base``) naming that backend,
    called ``<Bug>Backend`` and ``<Bug>Platform`` for ``<Bug>Impl``: the module must
    bind them to those names so their qualified names import."""
    bug = impl.__name__.removesuffix("Impl")
    backend = type(f"{bug}Backend", (CpuAttentionBackend,),
                   {"get_impl_cls": staticmethod(lambda: impl), "__module__": __name__})
    platform = type(f"{bug}Platform", (base,),
                    {"attention_backend": f"{__name__}.{bug}Backend", "__module__": __name__})
    return backend, platform


class NoCausalMaskImpl(CpuAttentionImpl):
    """Every query attends to its request's whole context, later tokens included:
    each token is computed as if it were its request's last."""

    def attend(self, query, key, value, kv_cache, metadata, output):
        n = metadata.num_actual_tokens
        starts = metadata.query_start_loc.long()
        token_req = torch.repeat_interleave(torch.arange(len(starts) - 1), starts[1:] - starts[:-1])
        per_token = dataclasses.replace(
            metadata, query_start_loc=torch.arange(n + 1, dtype=torch.int32),
            seq_lens=metadata.seq_lens[token_req], block_table=metadata.block_table[token_req],
            max_query_len=1,
        )
        super().attend(query, key, value, kv_cache, per_token, output)


class UnscaledSoftmaxImpl(CpuAttentionImpl):
    """Forgets the softmax scale: scores are ``q.k``, not ``scale * q.k``."""

    def __init__(self, num_heads, head_size, scale, *args, **kwargs):
        super().__init__(num_heads, head_size, 1.0, *args, **kwargs)


class ModuloGqaImpl(CpuAttentionImpl):
    """Maps query head ``h`` to KV head ``h % num_kv_heads`` instead of
    ``h // group``: computed by moving each head to where the right mapping sends it."""

    def attend(self, query, key, value, kv_cache, metadata, output):
        group = self.num_heads // self.num_kv_heads
        heads = torch.arange(self.num_heads)
        # Slot (h % kv_heads) * group + h // kv_heads reads KV head h % kv_heads.
        moved = (heads % self.num_kv_heads) * group + heads // self.num_kv_heads
        permuted = torch.empty_like(output)
        super().attend(query[:, moved.argsort()], key, value, kv_cache, metadata, permuted)
        output.copy_(permuted[:, moved])


class FirstBlockDecodeImpl(CpuAttentionImpl):
    """A decode request (one new token) reads only the first block of its context."""

    def attend(self, query, key, value, kv_cache, metadata, output):
        query_lens = metadata.query_start_loc[1:] - metadata.query_start_loc[:-1]
        first_block_only = torch.clamp(metadata.seq_lens, max=kv_cache.shape[2])
        seq_lens = torch.where(query_lens == 1, first_block_only, metadata.seq_lens)
        super().attend(query, key, value, kv_cache, dataclasses.replace(metadata, seq_lens=seq_lens), output)


class OffByOneSlotImpl(CpuAttentionImpl):
    """Writes each token's key and value one slot too far (the last slot wraps to the
    first, so the bug never raises: it only computes wrong answers, deterministically)."""

    def write_kv(self, key, value, kv_cache, slot_mapping):
        num_slots = kv_cache.shape[1] * kv_cache.shape[2]
        super().write_kv(key, value, kv_cache, torch.where(slot_mapping >= 0, (slot_mapping + 1) % num_slots, -1))


class IgnoredSlidingWindowImpl(CpuAttentionImpl):
    """Accepts a sliding window and then attends to the whole context."""

    def __init__(self, *args, sliding_window=None, **kwargs):
        super().__init__(*args, **kwargs)


class Fp16AccumulationImpl(CpuAttentionImpl):
    """Accumulates the unnormalised weighted sum of values in the model dtype: in fp16
    it overflows on long contexts of large values."""

    accumulate_dtype = None


class UnwrittenCacheImpl(CpuAttentionImpl):
    """Never writes the new keys and values into the cache."""

    def write_kv(self, key, value, kv_cache, slot_mapping):
        pass


class QueryScaledInPlaceImpl(CpuAttentionImpl):
    """Uses the caller's query tensor as scratch space for the scaled query its
    kernel reads, to save an allocation: the caller's query comes back scaled. (Its
    outputs are computed from the query as given, so they stay exactly right.)"""

    def forward(self, query, key, value, kv_cache, metadata, output):
        result = super().forward(query.clone(), key, value, kv_cache, metadata, output)
        query.mul_(self.scale)
        return result


class KeyCastInPlaceImpl(CpuAttentionImpl):
    """Casts the new keys to the cache dtype in the caller's tensor, which it uses as
    the staging buffer of its cache write: the cache and the outputs are right, but
    the caller's key comes back rounded to the cache dtype."""

    def write_kv(self, key, value, kv_cache, slot_mapping):
        key.copy_(key.to(kv_cache.dtype))
        super().write_kv(key, value, kv_cache, slot_mapping)


class Bf16StagedCacheWriteImpl(CpuAttentionImpl):
    """Writes keys and values into a cache of another dtype than the model's through
    bfloat16 (a store path written for bf16 caches only): right where the cache
    holds the model dtype or bfloat16, rounded too far elsewhere."""

    def write_kv(self, key, value, kv_cache, slot_mapping):
        if kv_cache.dtype != key.dtype:
            key, value = key.to(torch.bfloat16), value.to(torch.bfloat16)
        super().write_kv(key, value, kv_cache, slot_mapping)


class ContiguousStridesImpl(CpuAttentionImpl):
    """Reads ``query``, ``key`` and ``value`` with the strides of contiguous tensors of
    their shapes (as a kernel indexing ``token * heads * head_size`` from the data
    pointer does): right on tensors of their own, wrong on views of one fused QKV
    projection, whose token stride is the whole row."""

    def forward(self, query, key, value, kv_cache, metadata, output):
        query, key, value = (torch.as_strided(t, t.shape, (t.shape[1] * t.shape[2], t.shape[2], 1))
                             for t in (query, key, value))
        return super().forward(query, key, value, kv_cache, metadata, output)


class KeyStridesForValueImpl(CpuAttentionImpl):
    """Reads ``value`` with ``key``'s strides (as a kernel taking one token stride for
    both does): right where the two share a layout (tensors of their own, or both
    views of one fused projection), wrong beside a q/k-normed key of its own."""

    def forward(self, query, key, value, kv_cache, metadata, output):
        value = torch.as_strided(value, value.shape, key.stride())
        return super().forward(query, key, value, kv_cache, metadata, output)


class PackedHeadsAssumedImpl(CpuAttentionImpl):
    """Reads ``query`` with its token stride but with heads packed ``head_size`` apart
    (as a kernel taking one row stride does): right on tensors of their own and on
    views split along the row, wrong on a projection laid out per KV head, where a
    token's query heads lie further apart."""

    def forward(self, query, key, value, kv_cache, metadata, output):
        query = torch.as_strided(query, query.shape, (query.stride(0), query.shape[2], 1))
        return super().forward(query, key, value, kv_cache, metadata, output)


class PaddingOnlyAfterRealTokensImpl(CpuAttentionImpl):
    """Takes only the rows after ``num_actual_tokens`` for padding: writes every real
    row at its slot by indexing, so a slot of -1 among them lands in the cache's last
    slot (Python's negative index) instead of nowhere."""

    def write_kv(self, key, value, kv_cache, slot_mapping):
        num_kv_heads, head_size = kv_cache.shape[3], kv_cache.shape[4]
        for half, new in ((0, key), (1, value)):
            kv_cache[half].view(-1, num_kv_heads, head_size)[slot_mapping.long()] = new.to(kv_cache.dtype)


class StalePlanImpl(CpuAttentionImpl):
    """Plans a batch once per request count (as kernels captured per batch shape
    are) and replays that plan whenever the count comes back: the second decode step
    attends over the first step's sequence lengths."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._plans = {}

    def attend(self, query, key, value, kv_cache, metadata, output):
        plan = self._plans.setdefault(metadata.num_reqs, metadata)
        replayed = dataclasses.replace(metadata, seq_lens=plan.seq_lens, max_seq_len=plan.max_seq_len)
        super().attend(query, key, value, kv_cache, replayed, output)


class ShapeKeyedPlanImpl(CpuAttentionImpl):
    """Plans a batch once per shape (tokens and requests, as a CUDA graph is captured
    per padded batch shape) and replays the plan's block table and lengths whenever
    that shape comes back, though the new batch's requests differ."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._plans = {}

    def attend(self, query, key, value, kv_cache, metadata, output):
        plan = self._plans.setdefault((query.shape[0], metadata.num_reqs), metadata)
        replayed = dataclasses.replace(metadata, seq_lens=plan.seq_lens, max_seq_len=plan.max_seq_len,
                                       block_table=plan.block_table)
        super().attend(query, key, value, kv_cache, replayed, output)


class CapturedOutputImpl(CpuAttentionImpl):
    """Captures the ``output`` of each batch shape's first call as its static output
    buffer (as a CUDA graph is captured per padded batch shape) and, when the shape
    comes back, computes into that buffer and copies it into the new ``output``: each
    call's result is right, but the first call's output is overwritten."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._captured = {}

    def forward(self, query, key, value, kv_cache, metadata, output):
        captured = self._captured.setdefault(tuple(output.shape), output)
        super().forward(query, key, value, kv_cache, metadata, captured)
        return output if captured is output else output.copy_(captured)


class ShapeKeyedSlotsImpl(CpuAttentionImpl):
    """Attends over the batch's new keys and values where they are (here: a cache
    written at the true slots), and writes them into the cache with a slot mapping
    planned once per batch shape (tokens and requests) and replayed when the shape
    comes back: every output is right, but a repeated shape's keys and values land in
    the first batch's slots."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._slot_plans = {}

    def forward(self, query, key, value, kv_cache, metadata, output):
        super().forward(query, key, value, kv_cache.clone(), metadata, output)
        planned = self._slot_plans.setdefault((query.shape[0], metadata.num_reqs), metadata.slot_mapping)
        n = metadata.num_actual_tokens
        self.write_kv(key[:n], value[:n], kv_cache, planned[:n])
        return output


class TailReadingImpl(CpuAttentionImpl):
    """Computes over whole blocks and masks the unused tail of each last block by
    multiplying it by zero, which keeps a NaN: right only where tails are zeroed."""

    def attend(self, query, key, value, kv_cache, metadata, output):
        super().attend(query, key, value, kv_cache, metadata, output)
        block_size = kv_cache.shape[2]
        masked = [(0 * kv_cache[:, metadata.block_table[r, n // block_size], n % block_size:]).sum()
                  for r, n in enumerate(metadata.seq_lens.tolist()) if n % block_size]
        output[: metadata.num_actual_tokens] += sum(masked, torch.zeros((), dtype=output.dtype))


NoCausalMaskBackend, NoCausalMaskPlatform = _broken(NoCausalMaskImpl)
QueryScaledInPlaceBackend, QueryScaledInPlacePlatform = _broken(QueryScaledInPlaceImpl)
UnscaledSoftmaxBackend, UnscaledSoftmaxPlatform = _broken(UnscaledSoftmaxImpl)
ModuloGqaBackend, ModuloGqaPlatform = _broken(ModuloGqaImpl)
FirstBlockDecodeBackend, FirstBlockDecodePlatform = _broken(FirstBlockDecodeImpl)
OffByOneSlotBackend, OffByOneSlotPlatform = _broken(OffByOneSlotImpl)
IgnoredSlidingWindowBackend, IgnoredSlidingWindowPlatform = _broken(IgnoredSlidingWindowImpl)
Fp16AccumulationBackend, Fp16AccumulationPlatform = _broken(Fp16AccumulationImpl)
UnwrittenCacheBackend, UnwrittenCachePlatform = _broken(UnwrittenCacheImpl)
ContiguousStridesBackend, ContiguousStridesPlatform = _broken(ContiguousStridesImpl)
KeyStridesForValueBackend, KeyStridesForValuePlatform = _broken(KeyStridesForValueImpl)
StalePlanBackend, StalePlanPlatform = _broken(StalePlanImpl)
ShapeKeyedPlanBackend, ShapeKeyedPlanPlatform = _broken(ShapeKeyedPlanImpl)
TailReadingBackend, TailReadingPlatform = _broken(TailReadingImpl)
CapturedOutputBackend, CapturedOutputPlatform = _broken(CapturedOutputImpl)
ShapeKeyedSlotsBackend, ShapeKeyedSlotsPlatform = _broken(ShapeKeyedSlotsImpl)
PackedHeadsAssumedBackend, PackedHeadsAssumedPlatform = _broken(PackedHeadsAssumedImpl)
PaddingOnlyAfterRealTokensBackend, PaddingOnlyAfterRealTokensPlatform = _broken(PaddingOnlyAfterRealTokensImpl)
KeyCastInPlaceBackend, KeyCastInPlacePlatform = _broken(KeyCastInPlaceImpl, CastCacheTestPlatform)
Bf16StagedCacheWriteBackend, Bf16StagedCacheWritePlatform = _broken(Bf16StagedCacheWriteImpl, CastCacheTestPlatform)


class ZeroedTailReadingPlatform(TailReadingPlatform):
    """The tail-reading backend, honestly declared: correct, since the engine zeroes
    each block before a request first uses it."""

    capabilities = dataclasses.replace(
        TailReadingPlatform.capabilities,
        features=TailReadingPlatform.capabilities.features | {"zeroed_cache_blocks"})


def _made_positive(config):
    """``config`` as a check that a window and soft cap are declared, not that they are
    positive, sees it."""
    return dataclasses.replace(config, sliding_window=config.sliding_window and abs(config.sliding_window) or None,
                               logits_soft_cap=config.logits_soft_cap and abs(config.logits_soft_cap) or None)


class NonPositiveWindowBackend(CpuAttentionBackend):
    """Checks that a sliding window and a soft cap are declared, not that they are
    positive: a window of 0 reaches its kernel, which takes 0 for "no window", and a
    soft cap of 0 divides by zero."""

    @classmethod
    def validate_configuration(cls, config) -> list[str]:
        return super().validate_configuration(_made_positive(config))


class NonPositiveWindowPlatform(AttentionTestPlatform):
    """Selects with the same check (its own, not the contract's helper, which refuses
    a non-positive window or soft cap)."""

    attention_backend = f"{__name__}.NonPositiveWindowBackend"

    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        return super().get_attn_backend_cls(_made_positive(config))


class AcceptingEverythingBackend(CpuAttentionBackend):
    """Claims to support any configuration, so it computes where it should refuse."""

    @classmethod
    def validate_configuration(cls, config) -> list[str]:
        return []


class AcceptingEverythingPlatform(AttentionTestPlatform):
    """Selects its backend for any configuration, without checking its declaration,
    so nothing between the engine and the backend's kernels refuses."""

    attention_backend = f"{__name__}.AcceptingEverythingBackend"

    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        return cls.attention_backend


class RefusingHeadSize256Backend(CpuAttentionBackend):
    """Refuses head size 256 although its platform declares it."""

    @classmethod
    def validate_configuration(cls, config) -> list[str]:
        reasons = super().validate_configuration(config)
        return reasons + (["head size 256 (not built)"] if config.head_size == 256 else [])


class RefusingHeadSize256Platform(AttentionTestPlatform):
    attention_backend = f"{__name__}.RefusingHeadSize256Backend"


class TransposedKvCacheShapeBackend(CpuAttentionBackend):
    """Reports its cache as (2, blocks, kv_heads, block_size, head_size): a layout
    its kernels do not read."""

    @staticmethod
    def get_kv_cache_shape(num_blocks, block_size, num_kv_heads, head_size):
        return (2, num_blocks, num_kv_heads, block_size, head_size)


class TransposedKvCacheShapePlatform(AttentionTestPlatform):
    attention_backend = f"{__name__}.TransposedKvCacheShapeBackend"
