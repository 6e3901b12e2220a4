"""How far a backend's attention output may be from the float64 oracle, per dtype.

One table, reviewed as a whole. The bounds allow what a correct kernel cannot avoid:
rounding its inputs' products and its output to the dtype, and rounding the softmax
weights to the dtype before the weighted sum (as flash-attention kernels do). Any bug
the broken backends in ``tests/`` carry is orders of magnitude beyond them.
"""

from __future__ import annotations

import torch

#: dtype -> (absolute, relative) tolerance of attention outputs.
ATTENTION_TOLERANCES = {
    torch.float32: (1e-4, 1e-4),
    torch.float16: (4e-3, 4e-3),
    torch.bfloat16: (3e-2, 3e-2),
}


def coarsest(*dtypes: torch.dtype) -> torch.dtype:
    """Of ``dtypes``, the one with the loosest tolerance. A backend computing in the
    model dtype from keys and values kept in another rounds to both; it may also
    attend over a step's new keys and values as given, before the cache rounds
    them (as kernels that read a plain prefill's own tensors do), which differs from
    the oracle (reading the cache) by the cache dtype's rounding."""
    return max(dtypes, key=lambda dtype: ATTENTION_TOLERANCES[dtype])


def assert_close_to_oracle(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype,
                           what: str, value_scale: float = 1.0) -> None:
    """``actual`` (the backend's) is within ``dtype``'s tolerance of ``expected``
    (the oracle's, float64), element by element; the message says where and by how much.

    The absolute tolerance is for values of magnitude about 1 and scales with
    ``value_scale``: an output is a weighted mean of values, and when they cancel
    out, its error is that of the values, not of the (small) result."""
    atol, rtol = ATTENTION_TOLERANCES[dtype]
    atol *= value_scale
    actual, expected = actual.double().cpu(), expected.double().cpu()
    bound = atol + rtol * expected.abs()
    error = (actual - expected).abs()
    bad = ~(error <= bound)  # NaN counts as bad
    if bad.any():
        token, head, dim = (int(i) for i in bad.nonzero()[0])
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.numel()} values outside the {dtype} tolerance "
            f"(atol={atol}, rtol={rtol}); first at token {token}, head {head}, dim {dim}: "
            f"got {actual[token, head, dim].item():.6g}, oracle {expected[token, head, dim].item():.6g}; "
            f"max error {error.nan_to_num(float('inf')).max().item():.3g}"
        )
