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


@needs_native
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 16, 33])
@pytest.mark.parametrize("n, k", [(1, 32), (7, 45), (33, 1000), (130, 64), (257, 2816)])
def test_native_linear_matches_torch(dtype, m, n, k):
    """Rule: the C linear is ``x @ W.T`` to the dtype's rounding, for any M, N and K,
    including row counts that leave a partial tile and K that is not a whole vector."""
    gen = torch.Generator().manual_seed(m * 1000 + n + k)
    x = torch.randn(m, k, generator=gen).to(dtype)
    w = torch.randn(n, k, generator=gen).to(dtype)
    got = ops.native_linear(x, w)
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


def test_linear_routes_fp32_and_large_batches_to_torch(monkeypatch):
    """Rule: fp32 products and batches above MAX_ROWS are F.linear's, bit for bit (the
    fp32 HF-parity bound depends on it)."""
    def refuse(*args):
        raise AssertionError("native kernel called")

    monkeypatch.setattr(ops, "native_linear", refuse)
    w = torch.randn(16, 64)
    x = torch.randn(3, 64)
    assert torch.equal(ops.linear(x, w), F.linear(x, w))
    big = torch.randn(ops.MAX_ROWS + 1, 64).bfloat16()
    assert torch.equal(ops.linear(big, w.bfloat16()), F.linear(big, w.bfloat16()))


def test_env_switch_takes_the_torch_path(monkeypatch):
    """Rule: with CONFORMANCE_NATIVE_KERNELS=0 no C library loads and ``linear`` is
    F.linear, bit for bit, even for the shapes the kernel would take."""
    monkeypatch.setenv(native.ENV_SWITCH, "0")
    native._load.cache_clear()
    ops._kernels.cache_clear()
    try:
        assert native.library("linear") is None
        assert native.unavailable_reason("linear") == f"{native.ENV_SWITCH}=0"
        x = torch.randn(1, 64).bfloat16()
        w = torch.randn(16, 64).bfloat16()
        assert torch.equal(ops.linear(x, w), F.linear(x, w))
    finally:
        native._load.cache_clear()
        ops._kernels.cache_clear()


def _greedy_tokens(dtype: str, native_on: bool, monkeypatch, max_tokens: int) -> list[list[int]]:
    monkeypatch.setenv(native.ENV_SWITCH, "1" if native_on else "0")
    native._load.cache_clear()
    ops._kernels.cache_clear()
    llm = LLM(model="tiny", dtype=dtype, max_model_len=256)
    try:
        params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=True)
        outputs = llm.generate([{"prompt_token_ids": p} for p in PROMPTS], params, use_tqdm=False)
        return [list(o.outputs[0].token_ids) for o in outputs]
    finally:
        llm.shutdown()
        native._load.cache_clear()
        ops._kernels.cache_clear()


@needs_native
@pytest.mark.parametrize("dtype, max_tokens", [("float32", 24), ("bfloat16", 8)])
def test_engine_tokens_do_not_depend_on_native_kernels(dtype, max_tokens, monkeypatch):
    """Rule: the engine's greedy tokens are the same with the C kernels as without
    (fp32 never reaches them; bf16 differs from torch only in summation order)."""
    with_kernels = _greedy_tokens(dtype, True, monkeypatch, max_tokens)
    without = _greedy_tokens(dtype, False, monkeypatch, max_tokens)
    assert all(len(t) == max_tokens for t in with_kernels)
    assert with_kernels == without
