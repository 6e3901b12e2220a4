"""Platform suite, custom ops: the platform's own kernels for the model's per-token
ops (``Platform.custom_ops_module``, see ``conformance.contract.custom_ops``) compute what the
engine's torch layers compute, so a wrong kernel is named here rather than found as
drifting tokens in the Worker and Engine suites."""

from __future__ import annotations

import importlib

import pytest
import torch
import torch.nn.functional as F

from conformance.contract.custom_ops import OPS
from conformance.reference_engine.layers.activation import SiluAndMul
from conformance.reference_engine.layers.layernorm import RMSNorm
from conformance.reference_engine.layers.rotary import RotaryEmbedding
from conformance.suites.support import not_supported

#: (rtol, atol) per dtype: one rounding of the result either way, and in fp32 a
#: different summation order.
TOLERANCE = {torch.float32: (1e-4, 1e-5), torch.bfloat16: (2e-2, 2e-2), torch.float16: (2e-3, 2e-3)}
#: Rows as a decode (1) and a prefill (37) have; sizes not multiples of a vector width.
ROWS = (1, 37)
HIDDEN, INTERMEDIATE, OUTPUT = 200, 152, 97


def _custom_ops(platform) -> dict:
    if platform.custom_ops_module is None:
        not_supported("custom_ops_module is None: the engine uses its torch layers")
    module = importlib.import_module(platform.custom_ops_module)
    return {name: getattr(module, name) for name in OPS if hasattr(module, name)}


def _check(name: str, actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> None:
    rtol, atol = TOLERANCE[dtype]
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (
        f"{name}: got {actual.dtype} {tuple(actual.shape)}, the torch layer gives "
        f"{expected.dtype} {tuple(expected.shape)}")
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, msg=lambda m: f"{name}: {m}")


@pytest.mark.contract("platform.custom_ops.importable")
def test_custom_ops_module_imports(platform):
    """Imports ``custom_ops_module`` (``not_supported`` when None), collects the names
    of ``custom_ops.OPS`` it defines, and checks there is one and that each is
    callable."""
    ops = _custom_ops(platform)
    assert ops, f"{platform.custom_ops_module} defines none of {OPS}"
    for name, op in ops.items():
        assert callable(op), f"{platform.custom_ops_module}.{name} is not callable"


@pytest.mark.contract("platform.custom_ops.match_reference")
def test_custom_ops_match_the_torch_layers(platform, capabilities, device):
    """Seeded random inputs of 1 and 37 rows, odd widths, every declared dtype (and,
    for ``rotary_embedding``, every declared head size): each defined op (and
    ``rms_norm``'s in-place residual) against the reference layer's ``forward_native``
    or ``F.linear``, per-dtype tolerance."""
    ops = _custom_ops(platform)
    gen = torch.Generator().manual_seed(0)
    for dtype in capabilities.dtypes:
        for rows in ROWS:
            def rand(*shape, dtype=dtype):
                return torch.randn(*shape, generator=gen).to(device, dtype)

            where = f"{dtype}, {rows} rows"
            if "rms_norm" in ops:
                norm = RMSNorm(HIDDEN, 1e-6).to(device, dtype)
                norm.weight.copy_(rand(HIDDEN))
                x, residual = rand(rows, HIDDEN), rand(rows, HIDDEN)
                _check(f"rms_norm ({where})", ops["rms_norm"](x, norm.weight, norm.eps), norm.forward_native(x), dtype)
                expected, expected_residual = norm.forward_native(x, residual.clone())
                _check(f"rms_norm with residual ({where})", ops["rms_norm"](x, norm.weight, norm.eps, residual),
                       expected, dtype)
                _check(f"rms_norm's updated residual ({where})", residual, expected_residual, dtype)
            for head_size in capabilities.head_sizes if "rotary_embedding" in ops else ():
                rope = RotaryEmbedding(head_size, 4096, 10000.0).to(device)
                positions = torch.randint(0, 4096, (rows,), generator=gen).to(device)
                x = rand(rows, 3, head_size)
                _check(f"rotary_embedding ({where}, head size {head_size})",
                       ops["rotary_embedding"](positions, x, rope.cos, rope.sin),
                       rope.forward_native(positions, x), dtype)
            if "silu_and_mul" in ops:
                x = rand(rows, 2 * INTERMEDIATE)
                _check(f"silu_and_mul ({where})", ops["silu_and_mul"](x), SiluAndMul().forward_native(x), dtype)
            if "linear" in ops:
                x, weight = rand(rows, HIDDEN), rand(OUTPUT, HIDDEN) / HIDDEN**0.5
                _check(f"linear ({where})", ops["linear"](x, weight), F.linear(x, weight), dtype)
