"""The cpu platform's C kernels (``kernels/cpu``) against the torch ops they replace."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conformance.reference_engine import LLM, SamplingParams
from conformance.reference_engine.kernels.cpu import native, ops

needs_native = pytest.mark.skipif(
    native.library("linear") is None, reason=f"{native.unavailable_reason('linear')}"
)

PROMPTS = [[1, 5, 9, 200, 17], [1, 300, 301, 302, 303, 304, 305, 306, 307, 3, 4, 8]]
#: Every variant this host executes (each built once, then cached): the tests force
#: each in turn.
HOST_VARIANTS = [v.name for v in native.host_variants()]


@needs_native
@pytest.mark.parametrize("variant", HOST_VARIANTS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 16, 33])
@pytest.mark.parametrize("n, k", [(1, 32), (7, 45), (33, 1000), (130, 64), (257, 2816)])
def test_native_linear_matches_torch(variant, dtype, m, n, k):
    """Rule: the C linear of every variant this host executes is ``x @ W.T`` to the
    dtype's rounding, for any M, N and K, including row counts that leave a partial
    tile and K that is not a whole vector."""
    gen = torch.Generator().manual_seed(m * 1000 + n + k)
    x = torch.randn(m, k, generator=gen).to(dtype)
    w = torch.randn(n, k, generator=gen).to(dtype)
    got = ops.native_linear(x, w, variant)
    want = F.linear(x.float(), w.float())
    assert got.dtype == dtype and got.shape == (m, n)
    # Both round one fp32 sum to the dtype once: one unit in the last place, plus
    # fp32 reordering (tiny beside it).
    ulp = want.abs() * (2**-8 if dtype == torch.bfloat16 else 2**-11)
    assert torch.all((got.float() - want).abs() <= ulp + 1e-3 * k**0.5)


@needs_native
def test_native_linear_reads_strided_rows_and_keeps_leading_dims():
    """Rule: x may be a row-strided view and have leading dims; the result has x's
    leading dims and equals the product of the contiguous copy."""
    base = torch.randn(6, 2, 96).to(torch.bfloat16)
    x = base[:, 0]  # row stride 192, not 96
    w = torch.randn(40, 96).to(torch.bfloat16)
    assert torch.equal(ops.native_linear(x, w), ops.native_linear(x.contiguous(), w))
    batched = torch.randn(2, 3, 96).to(torch.bfloat16)
    assert torch.equal(ops.native_linear(batched, w), ops.native_linear(batched.reshape(6, 96), w).view(2, 3, 40))


@needs_native
def test_native_linear_rejects_what_it_cannot_compute():
    """Rule: the C linear refuses fp32 and mixed dtypes rather than misreading memory."""
    with pytest.raises(TypeError):
        ops.native_linear(torch.randn(1, 32), torch.randn(4, 32))
    with pytest.raises(TypeError):
        ops.native_linear(torch.randn(1, 32).half(), torch.randn(4, 32).bfloat16())


def _forget_loaded_kernels() -> None:
    native._load.cache_clear()
    ops._kernels.cache_clear()
    ops._routed.cache_clear()


@pytest.fixture
def fresh_kernels():
    """Kernels looked up again after the test changes the environment, and after it."""
    _forget_loaded_kernels()
    yield
    _forget_loaded_kernels()


@needs_native
@pytest.mark.parametrize("variant", HOST_VARIANTS)
def test_each_variant_is_built_for_its_isa(variant):
    """Rule: the library loaded for a variant holds that variant's code (the loader
    checks it too): the compiler flags of each select the ISA they name."""
    assert native.library("linear", variant).kernel_isa() == variant.encode()
    assert native.library("paged_attention", variant).kernel_isa() == variant.encode()


def test_variant_selection_follows_the_cpu_flags(monkeypatch):
    """Rule: a host with AVX2, FMA and F16C but no AVX-512 (x86-64-v3) runs the avx2
    variant, a bare x86-64-v2 one the portable variant, a fuller one AVX-512; forcing
    a variant the host cannot execute, or one that does not exist, is refused by name."""
    v2 = "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3"
    v3 = v2 + " avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"
    v4 = v3 + " avx512f avx512bw avx512cd avx512dq avx512vl"
    monkeypatch.setattr(native.platform, "machine", lambda: "x86_64")
    monkeypatch.delenv(native.ENV_VARIANT, raising=False)
    for flags, expected in ((v3, ["avx2", "portable"]), (v2, ["portable"]),
                            (v4 + " avx512_bf16", ["avx512_bf16", "avx512f", "avx2", "portable"])):
        monkeypatch.setattr(native, "_cpu_flags", lambda flags=flags: f"flags\t\t: fpu {flags}")
        native.host_variants.cache_clear()
        try:
            assert [v.name for v in native.host_variants()] == expected
            assert native.selected_variant().name == expected[0]
            monkeypatch.setenv(native.ENV_VARIANT, "portable")
            assert native.selected_variant().name == "portable"
            if "avx512f" not in expected:
                monkeypatch.setenv(native.ENV_VARIANT, "avx512f")
                with pytest.raises(ValueError, match="cannot execute"):
                    native.selected_variant()
            monkeypatch.setenv(native.ENV_VARIANT, "neon")
            with pytest.raises(ValueError, match="variants of x86_64"):
                native.selected_variant()
        finally:
            monkeypatch.delenv(native.ENV_VARIANT, raising=False)
            native.host_variants.cache_clear()


def test_arm_variant_selection_follows_the_cpu_features(monkeypatch):
    """Rule: an AArch64 host whose ``Features`` include ``bf16`` (Arm's BF16 extension)
    runs the neon_bf16 variant, one without it plain NEON."""
    monkeypatch.setattr(native.platform, "machine", lambda: "aarch64")
    monkeypatch.delenv(native.ENV_VARIANT, raising=False)
    for features, expected in (("fp asimd evtstrm crc32 bf16 i8mm", ["neon_bf16", "neon", "portable"]),
                               ("fp asimd evtstrm crc32", ["neon", "portable"])):
        monkeypatch.setattr(native, "_cpu_flags", lambda features=features: f"Features\t: {features}")
        native.host_variants.cache_clear()
        try:
            assert [v.name for v in native.host_variants()] == expected
        finally:
            native.host_variants.cache_clear()


@needs_native
@pytest.mark.parametrize("variant", HOST_VARIANTS)
def test_linear_routes_to_the_variant_only_up_to_its_measured_rows(variant, monkeypatch, fresh_kernels):
    """Rule: with a variant forced, ``linear`` calls its C kernel for products of up
    to ``max_rows(variant)`` rows in each dtype and ``F.linear`` beyond (bit for bit);
    a variant measured slower than torch (0 rows) never gets one."""
    monkeypatch.setenv(native.ENV_VARIANT, variant)
    calls = []
    real_run = ops._run
    monkeypatch.setattr(ops, "_run", lambda *args: calls.append(args) or real_run(*args))
    for dtype, limit in ops.max_rows(variant).items():
        calls.clear()
        w = torch.randn(16, 64).to(dtype)
        if limit:
            ops.linear(torch.randn(limit, 64).to(dtype), w)
            assert len(calls) == 1
        above = torch.randn(limit + 1, 64).to(dtype)
        assert torch.equal(ops.linear(above, w), F.linear(above, w))
        assert len(calls) == (1 if limit else 0)


def test_amx_hosts_give_torch_the_bf16_products_of_many_rows(monkeypatch):
    """Rule: where the CPU has AMX (torch's bf16 GEMM runs on it), bf16 products of
    more than AMX_MAX_BF16_ROWS rows go to torch whatever the variant's own limit."""
    monkeypatch.setattr(native, "isa_flags", lambda: ["amx_bf16", "avx512_bf16", "avx512f"])
    assert ops.max_rows("avx512_bf16")[torch.bfloat16] == ops.AMX_MAX_BF16_ROWS
    assert ops.max_rows("avx512_bf16")[torch.float16] == ops.MAX_ROWS["avx512_bf16"][torch.float16]
    monkeypatch.setattr(native, "isa_flags", lambda: ["avx512_bf16", "avx512bw", "avx512f"])
    assert ops.max_rows("avx512_bf16") == ops.MAX_ROWS["avx512_bf16"]


def test_beside_an_avx2_torch_the_avx2_and_portable_kernels_take_more_rows(monkeypatch):
    """Rule: where torch's oneDNN has no AVX-512 (an AVX2-only CPU, or one capped by
    ONEDNN_MAX_CPU_ISA), the avx2 and portable kernels get the rows measured against
    that torch; beside an AVX-512 torch, the fewer measured against it."""
    monkeypatch.setattr(native, "isa_flags", lambda: ["avx2", "f16c", "fma"])
    assert ops.torch_gemm_isa() == "avx2"
    assert ops.max_rows("avx2") == ops.MAX_ROWS_BESIDE_AVX2_TORCH["avx2"]
    assert ops.max_rows("portable") == ops.MAX_ROWS_BESIDE_AVX2_TORCH["portable"]
    monkeypatch.setattr(native, "isa_flags", lambda: ["amx_bf16", "avx2", "avx512bw", "avx512f"])
    assert ops.torch_gemm_isa() == "amx"
    assert ops.max_rows("avx2") == {torch.bfloat16: ops.AMX_MAX_BF16_ROWS, torch.float16: 4}
    monkeypatch.setenv(ops.ONEDNN_ISA_CAP, "AVX512_CORE_BF16")
    assert ops.torch_gemm_isa() == "avx512"
    monkeypatch.setenv(ops.ONEDNN_ISA_CAP, "AVX10_1_512")
    assert ops.torch_gemm_isa() == "avx512"
    monkeypatch.setenv(ops.ONEDNN_ISA_CAP, "AVX10_1_512_AMX")
    assert ops.torch_gemm_isa() == "amx"
    assert ops.max_rows("avx2") == ops.MAX_ROWS["avx2"]
    monkeypatch.setenv(ops.ONEDNN_ISA_CAP, "avx2")
    assert ops.torch_gemm_isa() == "avx2"
    assert ops.max_rows("avx2") == ops.MAX_ROWS_BESIDE_AVX2_TORCH["avx2"]


def test_linear_routes_fp32_and_large_batches_to_torch(monkeypatch):
    """Rule: fp32 products and batches above the variant's rows are F.linear's, bit
    for bit (the fp32 HF-parity bound depends on it)."""
    def refuse(*args):
        raise AssertionError("native kernel called")

    monkeypatch.setattr(ops, "_run", refuse)
    w = torch.randn(16, 64)
    x = torch.randn(3, 64)
    assert torch.equal(ops.linear(x, w), F.linear(x, w))
    tables = (*ops.MAX_ROWS.values(), *ops.MAX_ROWS_BESIDE_AVX2_TORCH.values())
    big = torch.randn(max(max(limits.values()) for limits in tables) + 1, 64).bfloat16()
    assert torch.equal(ops.linear(big, w.bfloat16()), F.linear(big, w.bfloat16()))


def test_env_switch_takes_the_torch_path(monkeypatch, fresh_kernels):
    """Rule: with CONFORMANCE_NATIVE_KERNELS=0 no C library loads and ``linear`` is
    F.linear, bit for bit, even for the shapes the kernel would take."""
    monkeypatch.setenv(native.ENV_SWITCH, "0")
    assert native.library("linear") is None
    assert native.unavailable_reason("linear") == f"{native.ENV_SWITCH}=0"
    assert native.describe() == f"off ({native.ENV_SWITCH}=0)"
    x = torch.randn(1, 64).bfloat16()
    w = torch.randn(16, 64).bfloat16()
    assert torch.equal(ops.linear(x, w), F.linear(x, w))


def _greedy_tokens(dtype: str, max_tokens: int) -> list[list[int]]:
    _forget_loaded_kernels()
    llm = LLM(model="tiny", dtype=dtype, max_model_len=256)
    try:
        params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
        outputs = llm.generate([{"prompt_token_ids": p} for p in PROMPTS], params, use_tqdm=False)
        return [list(o.outputs[0].token_ids) for o in outputs]
    finally:
        llm.shutdown()
        _forget_loaded_kernels()


@needs_native
@pytest.mark.parametrize("dtype, max_tokens", [("float32", 24), ("bfloat16", 8)])
def test_engine_tokens_do_not_depend_on_native_kernels(dtype, max_tokens, monkeypatch):
    """Rule: the engine's greedy tokens are the same with the C kernels as without
    (fp32 never reaches them; bf16 differs from torch only in summation order)."""
    with_kernels = _greedy_tokens(dtype, max_tokens)
    monkeypatch.setenv(native.ENV_SWITCH, "0")
    without = _greedy_tokens(dtype, max_tokens)
    assert all(len(t) == max_tokens for t in with_kernels)
    assert with_kernels == without


@needs_native
@pytest.mark.parametrize("variant", HOST_VARIANTS)
def test_engine_tokens_do_not_depend_on_the_variant(variant, monkeypatch):
    """Rule: forced to any variant this host executes, and routed to its kernels
    (linear and attention) even where torch would be faster, the engine generates
    the bf16 greedy tokens it generates without C kernels."""
    from conformance.reference_engine.attention import cpu_attn

    monkeypatch.setenv(native.ENV_SWITCH, "0")
    without = _greedy_tokens("bfloat16", 8)
    monkeypatch.setenv(native.ENV_SWITCH, "1")
    monkeypatch.setenv(native.ENV_VARIANT, variant)
    monkeypatch.setattr(ops, "max_rows", lambda variant: {torch.bfloat16: 32, torch.float16: 32})
    monkeypatch.setattr(cpu_attn, "NATIVE_ATTENTION_VARIANTS", frozenset({variant}))
    assert _greedy_tokens("bfloat16", 8) == without
