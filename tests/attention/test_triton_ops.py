"""Triton ops against the torch layers of the reference engine."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attention.conftest import requires_gpu

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
TOL = {torch.float32: 1e-5, torch.bfloat16: 2e-2, torch.float16: 2e-3}


def _torch_rms_norm(x, weight, eps):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def check_ops(device, dtype):
    from conformance.reference_engine.kernels import elementwise
    from conformance.reference_engine.layers.rotary import RotaryEmbedding

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(5, 48, generator=gen).to(device, dtype)
    residual = torch.randn(5, 48, generator=gen).to(device, dtype)
    weight = torch.rand(48, generator=gen).to(device, dtype)
    tol = dict(atol=TOL[dtype], rtol=TOL[dtype])
    torch.testing.assert_close(elementwise.rms_norm(x, weight, 1e-6), _torch_rms_norm(x, weight, 1e-6), **tol)
    fused_residual = residual.clone()
    out = elementwise.rms_norm(x, weight, 1e-6, residual=fused_residual)
    torch.testing.assert_close(fused_residual, x + residual, **tol)
    torch.testing.assert_close(out, _torch_rms_norm(x + residual, weight, 1e-6), **tol)

    rope = RotaryEmbedding(32, 64, 10000.0).to(device)
    positions = torch.tensor([0, 5, 63, 7], device=device)
    q = torch.randn(4, 3, 32, generator=gen).to(device, dtype)
    torch.testing.assert_close(elementwise.rotary_embedding(positions, q, rope.cos, rope.sin),
                               rope(positions, q), **tol)

    gate_up = torch.randn(3, 2 * 40, generator=gen).to(device, dtype)
    gate, up = gate_up.chunk(2, dim=-1)
    torch.testing.assert_close(elementwise.silu_and_mul(gate_up), (F.silu(gate.float()) * up.float()).to(dtype), **tol)


def check_ops_interpreted():
    for dtype in DTYPES:
        check_ops(torch.device("cpu"), dtype)


def test_elementwise_ops_match_torch_interpreted(run_interpreted):
    """RMSNorm (plain and with the fused residual add), RoPE and SiLU-and-mul equal
    the engine's torch layers in every dtype, under the interpreter."""
    run_interpreted("attention.test_triton_ops:check_ops_interpreted")


@requires_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_ops_match_torch_on_gpu(dtype):
    """The same ops, compiled for the GPU, equal the engine's torch layers."""
    check_ops(torch.device("cuda"), dtype)
