"""The CPU backend in the engine and its C kernel (``kernels/cpu/paged_attention.c``)
against the float64 oracle; the Attention suite on the cpu platform with and without
C kernels; and the Triton backend on a real GPU."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from attention.conftest import requires_gpu

from conformance.reference_engine import LLM, SamplingParams
from conformance.reference_engine.attention import cpu_attn
from conformance.reference_engine.attention.cpu_attn import CpuAttentionBackend, CpuAttentionImpl
from conformance.reference_engine.kernels.cpu import native
from conformance.reference_engine.platforms.cpu import CpuPlatform
from conformance.results.outcomes import FAILING
from conformance.suites.attention.strategies import BatchSpec, build_batch, run_backend, run_oracle
from conformance.suites.attention.tolerances import assert_close_to_oracle

PROMPTS = ["the CPU backend", {"prompt_token_ids": list(range(3, 60))}, "a", "paged attention " * 6]
requires_native = pytest.mark.skipif(cpu_attn.native_kernel() is None, reason="the C kernel cannot be built here")

#: A plain prefill, a chunked prefill, two decodes (one past many blocks), a
#: one-token prompt: every kind of request the kernel serves, in one batch.
MIXED = dict(query_lens=(37, 9, 1, 1, 1), context_lens=(0, 40, 70, 300, 0))


class OraclePlatform(CpuPlatform):
    """The cpu platform computing attention with the oracle."""

    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        cls.refuse_undeclared_attention(config)
        return "conformance.reference_engine.attention.oracle.OracleAttentionBackend"


def test_engine_greedy_tokens_equal_the_oracle_backends():
    """On the tiny preset in fp32, the engine on the CPU backend generates the same
    greedy tokens as on the oracle backend (prefill, chunked prefill and decode, with
    contexts past several blocks)."""
    greedy = SamplingParams(temperature=0, max_tokens=24, ignore_eos=True)
    tokens = {}
    for platform in (CpuPlatform, OraclePlatform):
        llm = LLM("tiny", dtype="float32", max_model_len=256, max_num_batched_tokens=64, platform=platform)
        try:
            assert llm.config.attention_backend.endswith(
                "CpuAttentionBackend" if platform is CpuPlatform else "OracleAttentionBackend")
            tokens[platform] = [o.outputs[0].token_ids for o in llm.generate(PROMPTS, greedy, use_tqdm=False)]
        finally:
            llm.shutdown()
    assert tokens[CpuPlatform] == tokens[OraclePlatform]


@requires_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_triton_backend_matches_oracle_on_gpu(dtype):
    """The Triton backend, compiled for the GPU, matches the oracle on a mixed batch
    with GQA, shuffled blocks and padding tokens."""
    from conformance.reference_engine.attention.triton_attn import TritonAttentionBackend

    spec = BatchSpec(query_lens=(37, 1, 5), context_lens=(0, 70, 33), num_kv_heads=2, group=4,
                     head_size=128, block_size=16, dtype=dtype, padding_tokens=2, seed=3)
    batch = build_batch(spec, TritonAttentionBackend, torch.device("cuda"))
    output, _ = run_backend(TritonAttentionBackend, batch)
    assert_close_to_oracle(output, run_oracle(batch), dtype, "triton on gpu")


@pytest.fixture
def native_only(monkeypatch):
    """Fail the test if any part of it falls back to the torch implementation."""
    def refuse(*args, **kwargs):
        raise AssertionError("fell back to the torch implementation")
    monkeypatch.setattr(CpuAttentionImpl, "_attend_torch", refuse)


def check(spec: BatchSpec) -> None:
    batch = build_batch(spec, CpuAttentionBackend, torch.device("cpu"))
    output, _ = run_backend(CpuAttentionBackend, batch)
    assert_close_to_oracle(output, run_oracle(batch), spec.dtype, str(spec), spec.value_scale)


@requires_native
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("block_size", [16, 32, 64])
@pytest.mark.parametrize("kv_heads,group", [(2, 4), (1, 8), (2, 1), (4, 2)])
@pytest.mark.parametrize("feature", [{}, {"sliding_window": 37}, {"logits_soft_cap": 5.0}])
def test_native_kernel_matches_oracle(native_only, dtype, block_size, kv_heads, group, feature):
    """Rule: every request's attention matches the oracle. Decode, chunked prefill, plain
    prefill and a one-token prompt in one batch, over shuffled non-contiguous blocks,
    block-table rows padded with -1, NaN in unowned slots and padding tokens; GQA, MQA
    and MHA; block sizes 16/32/64; sliding window and soft cap; fp32/bf16/fp16."""
    check(BatchSpec(**MIXED, num_kv_heads=kv_heads, group=group, head_size=128, block_size=block_size,
                    dtype=dtype, padding_tokens=2, seed=block_size + group, **feature))


@requires_native
@pytest.mark.parametrize("head_size", [32, 64, 256])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_native_kernel_head_sizes(native_only, head_size, dtype):
    """Rule: every supported head size gives the oracle's attention (the bf16 pair path
    works on 32 elements at a time, the fp32 path on 16)."""
    check(BatchSpec(**MIXED, num_kv_heads=2, group=2, head_size=head_size, block_size=16,
                    dtype=dtype, padding_tokens=1, seed=head_size))


@requires_native
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_group_larger_than_a_work_item(native_only, dtype):
    """Rule: query head h reads KV head h // group also when a group (here 32 query
    heads per KV head) is split over several work items."""
    check(BatchSpec(query_lens=(5, 1), context_lens=(20, 90), num_kv_heads=2, group=32, head_size=64,
                    block_size=16, dtype=dtype, padding_tokens=0, seed=5))


@requires_native
@pytest.mark.parametrize("threads", [1, 2, 5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_split_context_merges_to_the_oracle(native_only, threads, dtype):
    """Rule: a batch-1 decode over a long context, split into chunks across threads and
    merged (flash-decoding), matches the oracle, also with a sliding window; and the
    result is bitwise the same on a second run."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for window in (None, 700):
            spec = BatchSpec(query_lens=(1,), context_lens=(2500,), num_kv_heads=2, group=4, head_size=128,
                             block_size=32, dtype=dtype, padding_tokens=0, seed=threads, sliding_window=window)
            check(spec)
            batch = build_batch(spec, CpuAttentionBackend, torch.device("cpu"))
            first, second = run_backend(CpuAttentionBackend, batch)[0], run_backend(CpuAttentionBackend, batch)[0]
            assert torch.equal(first, second)
    finally:
        torch.set_num_threads(previous)


@requires_native
def test_query_rows_with_a_token_stride(native_only):
    """Rule: the output is right when query, key and value are views into one fused
    projection (a token stride larger than heads x head size), as a model hands them."""
    spec = BatchSpec(**MIXED, num_kv_heads=2, group=4, head_size=64, block_size=16, dtype=torch.float32,
                     padding_tokens=1, seed=11)
    batch = build_batch(spec, CpuAttentionBackend, torch.device("cpu"))
    fused = torch.cat([batch.query.flatten(1), batch.key.flatten(1), batch.value.flatten(1)], dim=1)
    q, k, v = fused.split([8 * 64, 2 * 64, 2 * 64], dim=1)
    strided = dataclasses.replace(batch, query=q.view(-1, 8, 64), key=k.view(-1, 2, 64), value=v.view(-1, 2, 64))
    output, _ = run_backend(CpuAttentionBackend, strided)
    assert_close_to_oracle(output, run_oracle(batch), spec.dtype, "strided inputs")


@requires_native
def test_fp16_long_context_of_large_values(native_only):
    """Rule: fp16 outputs that fit in fp16 come out right although the unnormalised sum
    of values over the context (about 1000 x 900) does not: sums are kept in fp32."""
    spec = BatchSpec(query_lens=(1, 3), context_lens=(900, 500), num_kv_heads=1, group=2, head_size=64,
                     block_size=16, dtype=torch.float16, padding_tokens=1, seed=0, value_scale=100.0)
    batch = build_batch(spec, CpuAttentionBackend, torch.device("cpu"))
    batch.kv_cache[0].mul_(0.01)
    batch.key.mul_(0.01)
    batch.kv_cache[1].abs_().add_(1000)
    batch.value.abs_().add_(1000)
    output, _ = run_backend(CpuAttentionBackend, batch)
    assert_close_to_oracle(output, run_oracle(batch), spec.dtype, "fp16 long context", value_scale=1000.0)


@pytest.mark.parametrize("native", ["1", "0"])
def test_attention_suite_passes_on_the_cpu_platform(run_kit, kit_env, native):
    """Rule: the cpu platform passes every contract of the Attention suite, with the C
    kernel and with CONFORMANCE_NATIVE_KERNELS=0 (the torch fallback)."""
    run = run_kit("--platform=cpu", "--suite=attention", "-q", "--conformance-record=run.record.json",
                  env={**kit_env, "CONFORMANCE_NATIVE_KERNELS": native})
    assert run.returncode == 0, run.output
    assert run.contracts_with(*FAILING) == set(), run.output


@pytest.fixture
def forced_variant(native_only, monkeypatch):
    """``forced_variant(name)``: the backend runs that variant's C kernel from then on,
    plain prefills included, whether or not its routing would choose it for this host."""
    real = cpu_attn.native_kernel

    def force(name: str) -> None:
        monkeypatch.setattr(cpu_attn, "native_kernel", lambda variant=None: real(name))
        monkeypatch.setattr(cpu_attn, "prefills_in_kernel", lambda: True)

    return force


@requires_native
@pytest.mark.parametrize("variant", [v.name for v in native.host_variants()])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_every_variant_matches_oracle(forced_variant, variant, dtype):
    """Rule: the C kernel of every variant this host executes (AVX-512, AVX2, portable
    on x86) gives the oracle's attention on decode, chunked and plain prefill, GQA and
    MHA, with a sliding window and a soft cap, and on a batch-1 decode split across
    threads; in fp32, bf16 and fp16."""
    forced_variant(variant)
    for head_size, kv_heads, group, feature in ((64, 2, 4, {}), (128, 2, 1, {"sliding_window": 20}),
                                                 (32, 1, 8, {"logits_soft_cap": 5.0})):
        check(BatchSpec(**MIXED, num_kv_heads=kv_heads, group=group, head_size=head_size, block_size=16,
                        dtype=dtype, padding_tokens=1, seed=7, **feature))
    check(BatchSpec(query_lens=(1,), context_lens=(1200,), num_kv_heads=2, group=4, head_size=128,
                    block_size=32, dtype=dtype, padding_tokens=0, seed=3))


@requires_native
def test_plain_prefills_left_to_sdpa_where_it_is_faster(native_only, monkeypatch):
    """Rule: where SDPA beats the kernel on plain prefills, the kernel computes the
    batch's other requests and SDPA the plain prefills, and together they give the
    oracle's attention."""
    monkeypatch.setattr(cpu_attn, "prefills_in_kernel", lambda: False)
    prefilled = []
    real_prefill = CpuAttentionImpl._prefill
    monkeypatch.setattr(CpuAttentionImpl, "_prefill",
                        lambda self, q, *rest: prefilled.append(q.shape[0]) or real_prefill(self, q, *rest))
    for dtype in (torch.float32, torch.bfloat16):
        prefilled.clear()
        check(BatchSpec(**MIXED, num_kv_heads=2, group=4, head_size=64, block_size=16, dtype=dtype,
                        padding_tokens=1, seed=9))
        assert prefilled == [37]  # the plain prefill; the one-token prompt is the kernel's


def test_routing_uses_the_kernel_only_for_variants_that_beat_torch(monkeypatch):
    """Rule: without a variant named, the backend gets the C kernel only where this
    host's variant is one measured faster than the torch path."""
    variant = native.selected_variant().name
    monkeypatch.setattr(cpu_attn, "NATIVE_ATTENTION_VARIANTS", frozenset())
    assert cpu_attn.native_kernel() is None
    monkeypatch.setattr(cpu_attn, "NATIVE_ATTENTION_VARIANTS", frozenset({variant}))
    assert (cpu_attn.native_kernel() is None) == (native.library("paged_attention") is None)
