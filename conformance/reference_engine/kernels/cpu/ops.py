"""The cpu platform's kernels for the model's per-token ops (see ``conformance.contract.custom_ops``).

``linear`` runs ``linear.c`` for bf16 and fp16 products with few rows (decode steps),
where torch's matrix-vector path streams the weights well below the memory bandwidth;
everything else (fp32, prefill-sized batches, a library that did not build) goes to
``F.linear``, so fp32 results are exactly torch's.
"""

from __future__ import annotations

import ctypes
import functools

import torch
import torch.nn.functional as F

from conformance.reference_engine.kernels.cpu import native

#: Most rows of x the C kernel takes; measured against ``F.linear`` on the small
#: preset's shapes (bench/README.md): beyond this torch's blocked GEMM wins.
MAX_ROWS = 32

_I64 = ctypes.c_int64
_PTR = ctypes.c_void_p


@functools.cache
def _kernels() -> dict[torch.dtype, ctypes._CFuncPtr] | None:
    lib = native.library("linear")
    if lib is None:
        return None
    kernels = {}
    for dtype, name in ((torch.bfloat16, "linear_bf16"), (torch.float16, "linear_f16")):
        fn = getattr(lib, name)
        fn.argtypes = (_PTR, _I64, _PTR, _PTR, _I64, _I64, _I64, ctypes.c_int)
        fn.restype = None
        kernels[dtype] = fn
    return kernels


def _run(kernel, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    n, k = weight.shape
    x2 = x if x.dim() == 2 else x.reshape(-1, k)
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    m = x2.shape[0]
    out = torch.empty(m, n, dtype=x.dtype, device=x.device)
    if m:
        kernel(x2.data_ptr(), x2.stride(0), weight.data_ptr(), out.data_ptr(), m, n, k, torch.get_num_threads())
    return out if x.dim() == 2 else out.view(*x.shape[:-1], n)


def native_linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x @ weight.T`` by the C kernel, any number of rows (bf16 or fp16, both the
    same dtype, ``weight`` contiguous); raises where the kernel cannot run."""
    kernels = _kernels()
    if kernels is None:
        raise RuntimeError(native.unavailable_reason("linear"))
    if x.dtype != weight.dtype or x.dtype not in kernels:
        raise TypeError(f"native linear takes bf16 or fp16 of one dtype, got {x.dtype} and {weight.dtype}")
    if not weight.is_contiguous():
        raise ValueError("native linear needs a contiguous weight")
    return _run(kernels[x.dtype], x, weight)


def linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x @ weight.T``: the C kernel where it beats torch, else ``F.linear``."""
    # Called 33 times a decode step: the checks are the few that decide the route.
    kernels = _kernels()
    kernel = kernels.get(x.dtype) if kernels is not None else None
    if (
        kernel is not None
        and weight.dtype == x.dtype
        and x.numel() <= MAX_ROWS * x.shape[-1]
        and weight.is_contiguous()
    ):
        return _run(kernel, x, weight)
    return F.linear(x, weight)
