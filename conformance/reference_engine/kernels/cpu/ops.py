"""The cpu platform's kernels for the model's per-token ops (see ``conformance.contract.custom_ops``).

``linear`` runs ``linear.c`` for bf16 and fp16 products with few rows (decode steps),
where torch's matrix-vector path streams the weights well below the memory bandwidth,
up to the rows where the variant built for this CPU (``native.selected_variant``)
was measured faster than ``F.linear``; everything else (fp32, larger batches, a
variant that does not beat torch, a library that did not build) goes to
``F.linear``, so fp32 results are exactly torch's.
"""

from __future__ import annotations

import ctypes
import functools
import os

import torch
import torch.nn.functional as F

from conformance.reference_engine.kernels.cpu import native

#: Per variant and dtype, the most rows of x the C kernel takes beside a torch whose
#: half-precision GEMM has AVX-512 (oneDNN's, on any AVX-512 host): where the variant
#: was measured faster than ``F.linear`` on the small preset's shapes by
#: ``bench/linear.py`` (bench/README.md). Beyond them torch's blocked GEMM wins; 0:
#: torch at every size, as for NEON (not yet measured on Arm hardware) and the
#: portable variant, which an AVX2 or AVX-512 torch outruns.
MAX_ROWS = {
    "avx512_bf16": {torch.bfloat16: 32, torch.float16: 16},
    "avx512f": {torch.bfloat16: 4, torch.float16: 16},
    "avx2": {torch.bfloat16: 4, torch.float16: 4},
    "neon_bf16": {torch.bfloat16: 0, torch.float16: 0},
    "neon": {torch.bfloat16: 0, torch.float16: 0},
    "portable": {torch.bfloat16: 0, torch.float16: 0},
}
#: The same beside a torch whose oneDNN has no AVX-512, as on every AVX2-only x86:
#: oneDNN then takes no bf16/fp16 GEMM and torch falls back to a loop that the AVX2
#: kernel outruns about 3x at every size measured (1 to 1024 rows); the portable
#: kernel wins in bf16 up to 8 rows, and loses in fp16 (x86-64-v2 has no F16C).
MAX_ROWS_BESIDE_AVX2_TORCH = {
    "avx2": {torch.bfloat16: 1024, torch.float16: 1024},
    "portable": {torch.bfloat16: 8, torch.float16: 0},
}
#: Where the CPU has AMX, torch's bf16 GEMM runs on it and wins from 16 rows up
#: (measured on a Xeon with AMX; the 32 above are a Zen 5's, which has none).
AMX_MAX_BF16_ROWS = 4
#: oneDNN's own switch to run as on a smaller CPU (``ONEDNN_MAX_CPU_ISA=AVX2``
#: emulates an AVX2-only host, as bench/README.md does); unset, it uses all it finds.
ONEDNN_ISA_CAP = "ONEDNN_MAX_CPU_ISA"


def torch_gemm_isa() -> str:
    """What torch's half-precision GEMM runs on here: ``amx``, ``avx512`` or ``avx2``
    (which also stands for anything smaller, and for non-x86 CPUs)."""
    flags = set(native.isa_flags())
    cap = os.environ.get(ONEDNN_ISA_CAP, "").strip().upper() or "ALL"
    # oneDNN's cap names: AVX2..., AVX512_CORE..., AVX10_1_512... (AVX-512 under its
    # newer name), with _AMX in those that allow the tiles.
    if cap != "ALL" and not cap.startswith(("AVX512", "AVX10")):
        return "avx2"
    if "amx_bf16" in flags and (cap == "ALL" or "AMX" in cap):
        return "amx"
    return "avx512" if "avx512bw" in flags else "avx2"


def describe_torch() -> str:
    """torch as the C kernels are routed beside it, for benchmark headers."""
    return (f"torch {torch.__version__} (ATen {torch.backends.cpu.get_cpu_capability()}, "
            f"half-precision GEMM on {torch_gemm_isa()})")


def max_rows(variant: str) -> dict[torch.dtype, int]:
    """The most rows ``linear`` gives the C kernel of ``variant`` on this host, per dtype."""
    torch_isa = torch_gemm_isa()
    beside_avx2 = torch_isa == "avx2" and variant in MAX_ROWS_BESIDE_AVX2_TORCH
    limits = dict((MAX_ROWS_BESIDE_AVX2_TORCH if beside_avx2 else MAX_ROWS)[variant])
    if torch_isa == "amx":
        limits[torch.bfloat16] = min(limits[torch.bfloat16], AMX_MAX_BF16_ROWS)
    return limits


_I64 = ctypes.c_int64
_PTR = ctypes.c_void_p


@functools.cache
def _kernels(variant: str | None = None) -> dict[torch.dtype, ctypes._CFuncPtr] | None:
    lib = native.library("linear", variant)
    if lib is None:
        return None
    kernels = {}
    for dtype, name in ((torch.bfloat16, "linear_bf16"), (torch.float16, "linear_f16")):
        fn = getattr(lib, name)
        fn.argtypes = (_PTR, _I64, _PTR, _PTR, _I64, _I64, _I64, ctypes.c_int)
        fn.restype = ctypes.c_int
        kernels[dtype] = fn
    return kernels


@functools.cache
def _routed() -> dict[torch.dtype, tuple[ctypes._CFuncPtr, int]]:
    """Per dtype, the kernel ``linear`` calls and the most rows it gives it."""
    kernels = _kernels()
    if kernels is None:
        return {}
    limits = max_rows(native.selected_variant().name)
    return {dtype: (kernel, limits[dtype]) for dtype, kernel in kernels.items() if limits[dtype]}


def _run(kernel, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    n, k = weight.shape
    x2 = x if x.dim() == 2 else x.reshape(-1, k)
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    m = x2.shape[0]
    out = torch.empty(m, n, dtype=x.dtype, device=x.device)
    if m and kernel(x2.data_ptr(), x2.stride(0), weight.data_ptr(), out.data_ptr(), m, n, k,
                    torch.get_num_threads()):
        raise MemoryError(f"native linear: no memory to widen x ({m} x {k})")
    return out if x.dim() == 2 else out.view(*x.shape[:-1], n)


def native_linear(x: torch.Tensor, weight: torch.Tensor, variant: str | None = None) -> torch.Tensor:
    """``x @ weight.T`` by the C kernel of ``variant`` (default: this host's), any
    number of rows (bf16 or fp16, both the same dtype, ``weight`` contiguous); raises
    where the kernel cannot run."""
    kernels = _kernels(variant)
    if kernels is None:
        raise RuntimeError(native.unavailable_reason("linear", variant))
    if x.dtype != weight.dtype or x.dtype not in kernels:
        raise TypeError(f"native linear takes bf16 or fp16 of one dtype, got {x.dtype} and {weight.dtype}")
    if not weight.is_contiguous():
        raise ValueError("native linear needs a contiguous weight")
    return _run(kernels[x.dtype], x, weight)


def linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x @ weight.T``: the C kernel where it beats torch, else ``F.linear``."""
    # Called 33 times a decode step: the checks are the few that decide the route.
    kernel, rows = _routed().get(x.dtype, (None, 0))
    if (
        kernel is not None
        and weight.dtype == x.dtype
        and x.numel() <= rows * x.shape[-1]
        and weight.is_contiguous()
    ):
        return _run(kernel, x, weight)
    return F.linear(x, weight)
