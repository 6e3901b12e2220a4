"""Hypothesis strategies and the batches they describe, for the Attention suite.

A test draws a ``BatchSpec`` (plain numbers: shapes, lengths, dtype, a seed), builds
its tensors with ``build_batch`` and runs the backend and the oracle on copies of the
same cache. Keeping the drawn value small and printable is what makes a failure
reproducible: the spec, the seed and a command that reruns the case are printed with
the falsifying example.

Profiles (``CONFORMANCE_HYPOTHESIS_PROFILE``): ``ci`` (default) is derandomised and
keeps no example database, so a run does not depend on its folder and a failure
reruns as it was; ``thorough`` draws many more, random examples; ``smoke`` is ``ci``
with a third of the examples, for slow backends (kernels under an interpreter).
"""

from __future__ import annotations

import dataclasses
import os
import pkgutil

import torch
from hypothesis import HealthCheck, Phase, currently_in_test_context, note, settings
from hypothesis import strategies as st

from conformance.contract.attention import (
    AttentionBackend,
    AttentionMetadata,
    AttentionSelectorConfig,
)
from conformance.reference_engine.attention.oracle import OracleAttentionImpl
from conformance.suites.attention.tolerances import assert_close_to_oracle, coarsest
from conformance.suites.support import exercised

PROFILE_VARIABLE = "CONFORMANCE_HYPOTHESIS_PROFILE"
_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    # No shrinking: a broken backend fails on its first failing example, in seconds;
    # derandomised, that example is the same on every run, so it reproduces as is.
    "ci", max_examples=12, derandomize=True, database=None,
    phases=[Phase.explicit, Phase.generate], **_COMMON,
)
settings.register_profile("thorough", max_examples=300, **_COMMON)
# For slow backends, such as Triton kernels under TRITON_INTERPRET=1.
settings.register_profile("smoke", settings.get_profile("ci"), max_examples=4)
PROFILE = os.environ.get(PROFILE_VARIABLE, "ci")
#: Decorate each ``@given`` test with this: the selected profile, for these tests only.
SUITE_SETTINGS = settings(settings.get_profile(PROFILE))

#: Query heads per KV head the suite tries (1 = MHA; with one KV head, MQA; 8 is
#: Llama-3-70B's, 16 other models').
GQA_GROUPS = (1, 2, 4, 8, 16)
KV_HEAD_COUNTS = (1, 2, 4, 8)
#: Most query heads of a drawn batch (64: 8 KV heads of 8).
MAX_HEADS = 64
MAX_REQUESTS = 8
MAX_PADDING_TOKENS = 3


@dataclasses.dataclass(frozen=True)
class BatchSpec:
    """One ragged batch: request ``r`` brings ``query_lens[r]`` new tokens after
    ``context_lens[r]`` tokens already in the cache."""

    query_lens: tuple[int, ...]
    context_lens: tuple[int, ...]
    num_kv_heads: int
    group: int
    head_size: int
    block_size: int
    dtype: torch.dtype
    padding_tokens: int
    seed: int
    sliding_window: int | None = None
    logits_soft_cap: float | None = None
    #: Scale of the values: large values with a long context overflow an
    #: accumulator kept in fp16.
    value_scale: float = 1.0
    #: A declared KV-cache dtype: ``"auto"`` (the model's) or a dtype's name.
    kv_cache_dtype: str = "auto"
    #: The last this many new tokens of each request (all but its first) have slot
    #: -1 although they lie inside ``num_actual_tokens``, as vLLM's drafter gives its
    #: tokens past the model's length: real rows the cache must not receive.
    unslotted_tail: int = 0

    @property
    def num_heads(self) -> int:
        return self.num_kv_heads * self.group

    @property
    def cache_dtype(self) -> torch.dtype:
        """The dtype the cache holds keys and values in."""
        return self.dtype if self.kv_cache_dtype == "auto" else getattr(torch, self.kv_cache_dtype)

    @property
    def tolerance_dtype(self) -> torch.dtype:
        """The dtype whose tolerance the output is judged by: the model's or the
        cache's, whichever rounds more (see ``tolerances.coarsest``)."""
        return coarsest(self.dtype, self.cache_dtype)

    @property
    def selector(self) -> AttentionSelectorConfig:
        return AttentionSelectorConfig(self.head_size, self.dtype, self.block_size, self.kv_cache_dtype,
                                       sliding_window=self.sliding_window,
                                       logits_soft_cap=self.logits_soft_cap)


def _length_near_blocks(block_size: int, max_blocks: int, minimum: int):
    """Lengths at, just before and just after block boundaries, and anything between."""
    boundary = st.builds(lambda b, d: b * block_size + d,
                         st.integers(1, max_blocks), st.sampled_from((-1, 0, 1)))
    return st.one_of(boundary, st.integers(minimum, max_blocks * block_size)).filter(
        lambda n: n >= minimum)


@st.composite
def batch_specs(draw, capabilities, kinds=("prefill", "chunked", "decode"), *,
                sliding_window=False, logits_soft_cap=False, dtypes=None) -> BatchSpec:
    """A batch over the declared head sizes, block sizes, dtypes and KV-cache dtypes,
    whose requests are of the given kinds: ``prefill`` (no context), ``chunked``
    (several new tokens after a context) or ``decode`` (one new token after a
    context)."""
    block_size = draw(st.sampled_from(capabilities.block_sizes))
    max_blocks = max(2, 64 // block_size)  # up to 3 blocks of 16, 2 of 128: cheap
    query_lens, context_lens = [], []
    for _ in range(draw(st.integers(1, MAX_REQUESTS))):
        kind = draw(st.sampled_from(kinds))
        query_lens.append(1 if kind == "decode" else draw(_length_near_blocks(block_size, max_blocks, 2)))
        context_lens.append(0 if kind == "prefill" else draw(_length_near_blocks(block_size, max_blocks, 1)))
    window = draw(st.integers(1, 2 * block_size)) if sliding_window else None
    cap = draw(st.sampled_from((5.0, 20.0))) if logits_soft_cap else None
    group = draw(st.sampled_from(GQA_GROUPS))
    kv_heads = draw(st.sampled_from([n for n in KV_HEAD_COUNTS if n * group <= MAX_HEADS]))
    return BatchSpec(
        query_lens=tuple(query_lens), context_lens=tuple(context_lens),
        num_kv_heads=kv_heads, group=group,
        head_size=draw(st.sampled_from(capabilities.head_sizes)), block_size=block_size,
        dtype=draw(st.sampled_from(dtypes or capabilities.dtypes)),
        padding_tokens=draw(st.integers(0, MAX_PADDING_TOKENS)), seed=draw(st.integers(0, 2**31 - 1)),
        sliding_window=window, logits_soft_cap=cap,
        kv_cache_dtype=draw(st.sampled_from(capabilities.kv_cache_dtypes)),
    )


#: How query, key and value come from one fused QKV projection in a real model:
#: ``"views"``, all three views of it, as vLLM's attention layers split it;
#: ``"qk_normed"``, query and key rewritten into tensors of their own (a per-head
#: q/k norm, as Qwen3 and OLMo 2 apply) beside a value still a view of it, so that
#: key and value differ in strides; ``"per_head"``, the projection laid out per KV
#: head (``[tokens, kv_heads, group + 2, head_size]``, as GPT-NeoX's and Falcon's
#: layers split it), so that the heads of key and value (and of query, with one
#: query head per KV head) are not packed: their head stride exceeds ``head_size``.
FUSED_LAYOUTS = ("views", "qk_normed", "per_head")


@dataclasses.dataclass(frozen=True)
class FusedQkv:
    """One fused QKV projection's output, and the layout (one of ``FUSED_LAYOUTS``)
    query, key and value are taken from it in."""

    tensor: torch.Tensor
    layout: str

    def __post_init__(self) -> None:
        if self.layout not in FUSED_LAYOUTS:
            raise ValueError(f"fused QKV layout {self.layout!r} is not one of {FUSED_LAYOUTS}")

    @classmethod
    def of(cls, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, spec: BatchSpec,
           layout: str) -> FusedQkv:
        """The projection ``split`` takes ``query``, ``key`` and ``value`` back from."""
        if layout == "per_head":
            per_kv_head = [t.reshape(t.shape[0], spec.num_kv_heads, -1, spec.head_size) for t in (query, key, value)]
            return cls(torch.cat(per_kv_head, dim=2).flatten(1), layout)
        return cls(torch.cat([query.flatten(1), key.flatten(1), value.flatten(1)], dim=-1), layout)

    def split(self, spec: BatchSpec) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Query, key and value taken from the projection as ``layout`` says."""
        qkv, heads, kv_heads, head = self.tensor, spec.num_heads, spec.num_kv_heads, spec.head_size
        if self.layout == "per_head":
            rows = qkv.view(-1, kv_heads, spec.group + 2, head)
            # A view where each KV head has one query head; a copy otherwise.
            return rows[:, :, :spec.group].reshape(-1, heads, head), rows[:, :, spec.group], rows[:, :, -1]
        q, k, v = qkv.split([heads * head, kv_heads * head, kv_heads * head], dim=-1)
        q, k, v = q.view(-1, heads, head), k.view(-1, kv_heads, head), v.view(-1, kv_heads, head)
        if self.layout == "qk_normed":
            return q.contiguous(), k.contiguous(), v
        return q, k, v


@dataclasses.dataclass
class Batch:
    spec: BatchSpec
    query: torch.Tensor  # [tokens + padding, heads, head_size]
    key: torch.Tensor
    value: torch.Tensor
    kv_cache: torch.Tensor  # contexts written, every other slot NaN
    metadata: AttentionMetadata
    #: Where ``query``, ``key`` and ``value`` are taken from one fused projection
    #: (None: each is a tensor of its own).
    fused: FusedQkv | None = None

    @property
    def num_tokens(self) -> int:
        return self.metadata.num_actual_tokens

    def new_output(self) -> torch.Tensor:
        """A NaN-filled, contiguous ``output``, as an engine allocates it (whatever the
        layout of ``query``)."""
        return torch.full(self.query.shape, float("nan"), dtype=self.query.dtype, device=self.query.device)

    def inputs(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Copies of ``query``, ``key`` and ``value`` in the batch's layout, made from one
        copy of the fused projection where they come from it (``clone`` of a view with
        gaps would make it contiguous)."""
        if self.fused is None:
            return self.query.clone(), self.key.clone(), self.value.clone()
        return FusedQkv(self.fused.tensor.clone(), self.fused.layout).split(self.spec)


def build_batch(spec: BatchSpec, backend: type[AttentionBackend], device: torch.device,
                unused_tails: float = 0.0, fused_layout: str | None = None) -> Batch:
    """The tensors of ``spec``: each request's blocks are shuffled, non-contiguous ids
    of one cache (in the spec's KV-cache dtype); its context is already in the
    cache (as earlier steps left it: drawn in the model dtype, cast to the cache's),
    the slots of its new tokens and every block no request owns hold NaN, the unused
    tail of each request's last block holds ``unused_tails`` (zero, as an engine
    that zeroes new blocks leaves it; ``attention.kv_cache.unowned_slots`` makes it
    NaN), and the batch ends with padding tokens whose slot is -1 (and the last
    ``unslotted_tail`` new tokens of each request have slot -1 too). With a
    ``fused_layout`` the same query, key and value come from one fused projection in
    that layout (``FusedQkv``)."""
    exercised(head_sizes=spec.head_size, block_sizes=spec.block_size, dtypes=spec.dtype,
              kv_cache_dtypes=spec.selector.kv_cache_dtype)
    gen = torch.Generator().manual_seed(spec.seed)
    bs, kv_heads, head = spec.block_size, spec.num_kv_heads, spec.head_size
    seq_lens = [q + c for q, c in zip(spec.query_lens, spec.context_lens)]
    blocks_per_req = [-(-s // bs) for s in seq_lens]
    num_blocks = sum(blocks_per_req) + 2  # spare blocks nobody owns
    ids = torch.randperm(num_blocks, generator=gen).tolist()
    tables, taken = [], 0
    for need in blocks_per_req:
        tables.append(ids[taken : taken + need])
        taken += need
    width = max(blocks_per_req)
    block_table = torch.tensor([t + [-1] * (width - len(t)) for t in tables], dtype=torch.int32)

    def slots(r: int, first: int, end: int) -> torch.Tensor:
        """The cache slots of positions ``first .. end-1`` of request ``r``."""
        positions = torch.arange(first, end)
        return block_table[r].long()[positions // bs] * bs + positions % bs

    def rand(rows: int, heads: int, scale: float = 1.0) -> torch.Tensor:
        return (torch.randn(rows, heads, head, generator=gen) * scale).to(spec.dtype)

    shape = backend.get_kv_cache_shape(num_blocks, bs, kv_heads, head)
    kv_cache = torch.full(shape, float("nan"), dtype=spec.cache_dtype)
    key_cache, value_cache = kv_cache[0].view(-1, kv_heads, head), kv_cache[1].view(-1, kv_heads, head)
    for r, (length, context) in enumerate(zip(seq_lens, spec.context_lens)):
        tail = slots(r, length, blocks_per_req[r] * bs)
        key_cache[tail] = unused_tails
        value_cache[tail] = unused_tails
        written = slots(r, 0, context)
        key_cache[written] = rand(context, kv_heads, 2.0).to(spec.cache_dtype)
        value_cache[written] = rand(context, kv_heads, spec.value_scale).to(spec.cache_dtype)
    n, pad = sum(spec.query_lens), spec.padding_tokens
    new_slots = [slots(r, c, c + q) for r, (q, c) in enumerate(zip(spec.query_lens, spec.context_lens))]
    for written in new_slots:
        written[max(1, len(written) - spec.unslotted_tail):] = -1
    slot_mapping = torch.cat([*new_slots, torch.full((pad,), -1, dtype=torch.long)])
    query_start_loc = torch.tensor([0, *spec.query_lens], dtype=torch.int32).cumsum(0, dtype=torch.int32)
    metadata = AttentionMetadata(
        query_start_loc=query_start_loc.to(device), seq_lens=torch.tensor(seq_lens, dtype=torch.int32).to(device),
        block_table=block_table.to(device), slot_mapping=slot_mapping.to(device),
        max_query_len=max(spec.query_lens), max_seq_len=max(seq_lens), num_actual_tokens=n,
    )
    query, key, value = (rand(n + pad, spec.num_heads, 2.0), rand(n + pad, kv_heads, 2.0),
                         rand(n + pad, kv_heads, spec.value_scale))
    if fused_layout is None:
        return Batch(spec, query.to(device), key.to(device), value.to(device), kv_cache.to(device), metadata)
    fused = FusedQkv.of(query.to(device), key.to(device), value.to(device), spec, fused_layout)
    return Batch(spec, *fused.split(spec), kv_cache.to(device), metadata, fused)


def backend_for(platform, config: AttentionSelectorConfig) -> type[AttentionBackend]:
    """The backend the platform names for ``config``."""
    return pkgutil.resolve_name(platform.get_attn_backend_cls(config))


def make_impl(backend: type[AttentionBackend], spec: BatchSpec):
    return backend.get_impl_cls()(spec.num_heads, spec.head_size, spec.head_size**-0.5, spec.num_kv_heads,
                                  sliding_window=spec.sliding_window, logits_soft_cap=spec.logits_soft_cap,
                                  kv_cache_dtype=spec.kv_cache_dtype)


def run_backend(backend: type[AttentionBackend], batch: Batch, impl=None) -> tuple[torch.Tensor, torch.Tensor]:
    """The backend's output rows of real tokens, and the cache it leaves (on copies of
    every input, so a backend that changes one cannot change what the oracle sees;
    ``attention.forward.inputs_unchanged`` names that bug), from ``impl`` or a new one."""
    kv_cache, output = batch.kv_cache.clone(), batch.new_output()
    impl = impl or make_impl(backend, batch.spec)
    impl.forward(*batch.inputs(), kv_cache, batch.metadata, output)
    return output[: batch.num_tokens], kv_cache


def run_oracle(batch: Batch) -> torch.Tensor:
    """The float64 oracle's output rows of real tokens, on a copy of the cache: it
    reads the context and the new tokens from the cache, so a cache narrower than
    the model rounds its inputs as it rounds the backend's."""
    spec = batch.spec
    oracle = OracleAttentionImpl(spec.num_heads, spec.head_size, spec.head_size**-0.5, spec.num_kv_heads,
                                 sliding_window=spec.sliding_window, logits_soft_cap=spec.logits_soft_cap,
                                 compute_dtype=torch.float64)
    output = torch.empty(batch.query.shape, dtype=torch.float64, device=batch.query.device)
    oracle.forward(batch.query, batch.key, batch.value, batch.kv_cache.clone(), batch.metadata, output)
    return output[: batch.num_tokens]


def assert_cache_written(kv_cache: torch.Tensor, batch: Batch) -> None:
    """``kv_cache`` is ``batch``'s input cache with each real token's key and value,
    cast, written at its ``slot_mapping`` slot, bit for bit (NaN included)."""
    spec = batch.spec
    expected = batch.kv_cache.clone()
    n = batch.num_tokens
    slots = batch.metadata.slot_mapping[:n]
    written = slots >= 0
    for index, new in ((0, batch.key), (1, batch.value)):
        expected[index].view(-1, spec.num_kv_heads, spec.head_size)[slots[written]] = new[:n][written].to(expected.dtype)
    # NaN compares unequal to itself: compare bit patterns.
    wrong = (bits(kv_cache.cpu()) != bits(expected.cpu())).any(dim=-1).any(dim=-1)  # [2, blocks, block_size]
    if wrong.any():
        kind, block, offset = (int(i) for i in wrong.nonzero()[0])
        slot = block * spec.block_size + offset
        owner = (slots == slot).nonzero()
        raise AssertionError(
            f"{int(wrong.sum())} cache slots differ; first: {'value' if kind else 'key'} slot {slot} "
            + (f"(token {int(owner[0])}'s)" if len(owner) else "(no token's: must be untouched)")
        )


def bits(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's bit patterns, for exact comparisons in which NaN equals itself."""
    return tensor.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[tensor.element_size()])


def describe(spec: BatchSpec) -> str:
    """The batch in one line, long length lists shortened."""
    def lengths(values: tuple[int, ...]) -> str:
        return str(values) if len(values) <= 8 else f"({', '.join(map(str, values[:6]))}, ... {len(values)} in all)"

    return (f"{len(spec.query_lens)} requests, query_lens={lengths(spec.query_lens)}, "
            f"context_lens={lengths(spec.context_lens)}, heads={spec.num_heads}/{spec.num_kv_heads} kv, "
            f"head_size={spec.head_size}, block_size={spec.block_size}, dtype={spec.dtype}, "
            f"kv_cache_dtype={spec.kv_cache_dtype}, "
            f"padding_tokens={spec.padding_tokens}, unslotted_tail={spec.unslotted_tail}, "
            f"sliding_window={spec.sliding_window}, "
            f"logits_soft_cap={spec.logits_soft_cap}, seed={spec.seed}")


def note_reproducer(spec: BatchSpec, platform_name: str, contract: str) -> None:
    """Printed with a falsifying example (or a failing plain test's output): what the
    batch was and how to rerun it."""
    (note if currently_in_test_context() else print)(
        f"reproduce: {PROFILE_VARIABLE}={PROFILE} pytest --platform={platform_name} "
        f"--suite=attention -k {contract}\nbatch: {describe(spec)}"
    )


def in_each_fused_layout(check):
    """``check(spec, fused_layout=...)`` as a check of ``spec`` alone: run in every
    layout of ``FUSED_LAYOUTS``, a failure naming its layout."""
    def each(spec: BatchSpec) -> None:
        for layout in FUSED_LAYOUTS:
            try:
                check(spec, fused_layout=layout)
            except AssertionError as failure:
                raise AssertionError(f"query, key and value {layout} of a fused projection: {failure}") from None
    return each


def check_each(specs: list[BatchSpec], check, contract: str) -> None:
    """``check(spec)`` for every explicit batch; the failures, each with its batch,
    together in one message."""
    failures = []
    for spec in specs:
        try:
            check(spec)
        except AssertionError as failure:
            failures.append(f"batch {describe(spec)}:\n  {failure}")
    assert not failures, (f"{contract}: {len(failures)} of {len(specs)} explicit batches fail\n"
                          + "\n".join(failures[:3]))


def check_against_oracle(platform, platform_name: str, spec: BatchSpec, contract: str) -> None:
    """The backend's output on ``spec``'s batch is within tolerance of the oracle's."""
    note_reproducer(spec, platform_name, contract)
    compare_with_oracle(platform, spec, contract)


def compare_with_oracle(platform, spec: BatchSpec, contract: str, **build) -> None:
    """``check_against_oracle`` without the reproducer (``check_each`` names the batch);
    ``build`` goes to ``build_batch``."""
    backend = backend_for(platform, spec.selector)
    batch = build_batch(spec, backend, platform.torch_device(0), **build)
    output, _ = run_backend(backend, batch)
    assert_close_to_oracle(output, run_oracle(batch), spec.tolerance_dtype, contract, spec.value_scale)
