"""The CUDA path's per-token Triton ops: RMSNorm (with the residual add fused),
rotary embedding (rotate-half form) and SiLU-and-mul. Each computes in float32 and
writes the input dtype, as the torch layers of the reference engine do."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(x_ptr, residual_ptr, weight_ptr, out_ptr, eps, N: tl.constexpr,
                     N_PAD: tl.constexpr, HAS_RESIDUAL: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, N_PAD)
    mask = offs < N
    # Arithmetic in fp32, rounded to the input dtype where the torch layer rounds.
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0)
    ty = x.dtype
    h = x.to(tl.float32)
    if HAS_RESIDUAL:
        h = (h + tl.load(residual_ptr + row * N + offs, mask=mask, other=0.0).to(tl.float32)).to(ty)
        tl.store(residual_ptr + row * N + offs, h, mask=mask)  # the new residual
        h = h.to(tl.float32)
    h = h * tl.rsqrt(tl.sum(h * h, 0) / N + eps)
    weight = tl.load(weight_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * N + offs, (weight * h.to(ty).to(tl.float32)).to(ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float,
             residual: torch.Tensor | None = None) -> torch.Tensor:
    """``weight * norm(x)``; with ``residual``, ``norm(x + residual)`` and ``residual``
    becomes ``x + residual`` in place (the engine's fused add)."""
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.shape[-1]
    _rms_norm_kernel[(x.numel() // n,)](x, residual if residual is not None else x, weight, out, eps,
                                        N=n, N_PAD=triton.next_power_of_2(n),
                                        HAS_RESIDUAL=residual is not None)
    return out


@triton.jit
def _rotary_kernel(x_ptr, out_ptr, positions_ptr, cos_ptr, sin_ptr, heads,
                   HALF: tl.constexpr, HALF_PAD: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    offs = tl.arange(0, HALF_PAD)
    mask = offs < HALF
    pos = tl.load(positions_ptr + token).to(tl.int64)
    cos = tl.load(cos_ptr + pos * HALF + offs, mask=mask)
    sin = tl.load(sin_ptr + pos * HALF + offs, mask=mask)
    base = (token * heads + head) * 2 * HALF
    x1 = tl.load(x_ptr + base + offs, mask=mask).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF + offs, mask=mask).to(tl.float32)
    ty = out_ptr.dtype.element_ty
    tl.store(out_ptr + base + offs, (x1 * cos - x2 * sin).to(ty), mask=mask)
    tl.store(out_ptr + base + HALF + offs, (x2 * cos + x1 * sin).to(ty), mask=mask)


def rotary_embedding(positions: torch.Tensor, x: torch.Tensor, cos: torch.Tensor,
                     sin: torch.Tensor) -> torch.Tensor:
    """``x`` ``[tokens, heads, head_size]`` rotated by each token's position;
    ``cos``/``sin`` ``[max_position, head_size // 2]`` float32 tables."""
    x = x.contiguous()
    out = torch.empty_like(x)
    half = x.shape[-1] // 2
    _rotary_kernel[(x.shape[0], x.shape[1])](x, out, positions, cos.contiguous(), sin.contiguous(),
                                             x.shape[1], HALF=half, HALF_PAD=triton.next_power_of_2(half))
    return out


@triton.jit
def _silu_and_mul_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    gate = tl.load(x_ptr + row * 2 * N + offs, mask=mask).to(tl.float32)
    up = tl.load(x_ptr + row * 2 * N + N + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + row * N + offs, (gate * tl.sigmoid(gate) * up).to(out_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """``silu(gate) * up`` for ``x = [gate, up]`` along the last dimension."""
    x = x.contiguous()
    n = x.shape[-1] // 2
    out = x.new_empty(*x.shape[:-1], n)
    block = min(1024, triton.next_power_of_2(n))
    _silu_and_mul_kernel[(x.numel() // (2 * n), triton.cdiv(n, block))](x, out, N=n, BLOCK=block)
    return out
