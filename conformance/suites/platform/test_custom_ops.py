"""Platform suite, custom ops: the platform's own kernels for the model's per-token
ops (``Platform.custom_ops_module``, see ``conformance.contract.custom_ops``) compute what the
engine's torch layers compute, so a wrong kernel is named here rather than found as
drifting tokens in the Worker and Engine suites."""

from __future__ import annotations

import importlib
import itertools

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
#: Rows as a decode of one request (1), a decode of a few (5) and a prefill (37) have:
#: sizes not multiples of a vector width, each side of the few rows a decode kernel takes.
ROWS = (1, 5, 37)
#: Rounds of the same shapes with new values: a kernel that keeps a result, a buffer
#: or a prepacked weight per shape sees each shape again.
ROUNDS = 3
#: Per round, the scale of ``rms_norm``'s rows and the eps passed with them: as drawn;
#: small, where the eps outweighs the mean square (a kernel that ignores the eps it is
#: passed, or squares in a half dtype, is off by a factor); large, as the outlier
#: activations of LLMs reach, where squares overflow float16.
NORM_ROUNDS = ((1.0, 1e-6), (1e-3, 1e-5), (300.0, 1e-6))
HIDDEN, INTERMEDIATE, OUTPUT = 200, 152, 97
#: How the engine hands an op its activations: packed, or as a view whose rows lie
#: further apart than their width (the query and key of a fused QKV projection).
LAYOUTS = ("packed rows", "strided rows")
#: Elements between one strided row's end and the next row's start: NaN, so a kernel
#: that reads a view's rows as packed reads some of them.
ROW_GAP = 7


def _custom_ops(platform) -> dict:
    if platform.custom_ops_module is None:
        not_supported("custom_ops_module is None: the engine uses its torch layers")
    module = importlib.import_module(platform.custom_ops_module)
    return {name: getattr(module, name) for name in OPS if hasattr(module, name)}


def _laid_out(x: torch.Tensor, layout: str) -> torch.Tensor:
    """``x``'s values in ``layout``: packed as drawn, or as a view of the first columns of
    a buffer whose rows are ``ROW_GAP`` elements wider, as a fused projection leaves its
    slices."""
    if layout == "packed rows":
        return x
    width = x[0].numel()
    wide = torch.full((x.shape[0], width + ROW_GAP), float("nan"), dtype=x.dtype, device=x.device)
    wide[:, :width] = x.reshape(x.shape[0], width)
    return wide[:, :width].view(x.shape)


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
    """Seeded random inputs of 1, 5 and 37 rows, odd widths, every declared dtype (and,
    for ``rotary_embedding``, every declared head size), three rounds of the same
    shapes with new values (``rms_norm``'s scaled and with the eps of
    ``NORM_ROUNDS``), each activation once packed and once as a view with strided
    rows (``linear``'s also as ``[2, rows, hidden]``): each defined op (and
    ``rms_norm``'s in-place residual) against the reference layer's
    ``forward_native`` or ``F.linear``, per-dtype tolerance; every other input
    compared bitwise before and after the call, and every returned tensor again after
    the last call."""
    ops, calls = _custom_ops(platform), _Calls()
    gen = torch.Generator().manual_seed(0)
    for dtype, round_, rows, layout in itertools.product(capabilities.dtypes, range(ROUNDS), ROWS, LAYOUTS):
        def rand(*shape, dtype=dtype):
            return torch.randn(*shape, generator=gen).to(device, dtype)

        def activation(*shape, layout=layout):
            return _laid_out(rand(*shape), layout)

        where = f"{dtype}, {rows} {layout}, round {round_ + 1}"
        if "rms_norm" in ops:
            scale, eps = NORM_ROUNDS[round_ % len(NORM_ROUNDS)]
            norm = RMSNorm(HIDDEN, eps).to(device, dtype)
            norm.weight.copy_(rand(HIDDEN))
            x, residual = _laid_out(rand(rows, HIDDEN) * scale, layout), rand(rows, HIDDEN) * scale
            at = f"{where}, rows of scale {scale:g}, eps {eps:g}"
            calls.check(f"rms_norm ({at})", ops["rms_norm"], (x, norm.weight, norm.eps),
                        norm.forward_native(x), dtype)
            expected, expected_residual = norm.forward_native(x, residual.clone())
            calls.check(f"rms_norm with residual ({at})", ops["rms_norm"],
                        (x, norm.weight, norm.eps, residual), expected, dtype, updated=residual)
            _check(f"rms_norm's updated residual ({at})", residual, expected_residual, dtype)
        for head_size in capabilities.head_sizes if "rotary_embedding" in ops else ():
            rope = RotaryEmbedding(head_size, 4096, 10000.0).to(device)
            positions = torch.randint(0, 4096, (rows,), generator=gen).to(device)
            x = activation(rows, 3, head_size)
            calls.check(f"rotary_embedding ({where}, head size {head_size})", ops["rotary_embedding"],
                        (positions, x, rope.cos, rope.sin), rope.forward_native(positions, x), dtype)
        if "silu_and_mul" in ops:
            x = activation(rows, 2 * INTERMEDIATE)
            calls.check(f"silu_and_mul ({where})", ops["silu_and_mul"], (x,),
                        SiluAndMul().forward_native(x), dtype)
        if "linear" in ops:
            weight = rand(OUTPUT, HIDDEN) / HIDDEN**0.5
            for x in (activation(rows, HIDDEN), activation(2, rows, HIDDEN)):
                calls.check(f"linear ({where}, x {tuple(x.shape)})", ops["linear"], (x, weight),
                            F.linear(x, weight), dtype)
    calls.recheck()


class _Calls:
    """Each op call checked as it returns, and its result kept to check again after
    later calls (a kernel that returns a buffer it reuses overwrites earlier results)."""

    def __init__(self) -> None:
        self._kept: list[tuple[str, torch.Tensor, torch.Tensor]] = []

    def check(self, name: str, op, args: tuple, expected: torch.Tensor, dtype: torch.dtype,
              updated: torch.Tensor | None = None) -> None:
        """Call ``op(*args)``: the result must match ``expected``, and every tensor
        argument but ``updated`` (which the op writes by contract) be left as it was."""
        inputs = {i: arg.clone() for i, arg in enumerate(args)
                  if isinstance(arg, torch.Tensor) and arg is not updated}
        actual = op(*args)
        _check(name, actual, expected, dtype)
        changed = [i for i, was in inputs.items() if not torch.equal(args[i], was)]
        assert not changed, f"{name}: modified its argument(s) at position {changed}"
        self._kept.append((name, actual, actual.clone()))

    def recheck(self) -> None:
        changed = [name for name, actual, copy in self._kept if not torch.equal(actual, copy)]
        if changed:
            raise AssertionError(f"{len(changed)} returned tensors changed after later calls "
                                 f"(a reused buffer), first {changed[0]}")
