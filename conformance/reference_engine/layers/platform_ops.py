"""The platform's own kernels for the model's per-token ops (vLLM's ``CustomOp``).

Each layer has a torch implementation, ``forward_native``, which is the reference. A platform may
name, in ``Platform.custom_ops_module``, a module holding kernels for any subset of
``OPS``; a layer built while that platform is current calls the kernel instead.
Kernels must give the torch layer's result (to the dtype's rounding) and keep its
signature:

- ``rms_norm(x, weight, eps, residual=None) -> out``: ``weight * norm(x)``; with
  ``residual``, ``norm(x + residual)``, and ``residual`` is updated in place to
  ``x + residual``;
- ``rotary_embedding(positions, x, cos, sin) -> out``: ``x`` ``[tokens, heads,
  head_size]`` rotated (rotate-half form) by fp32 tables ``[max_position,
  head_size // 2]``;
- ``silu_and_mul(x) -> out``: ``silu(gate) * up`` for ``x = [gate, up]`` on the last dim;
- ``linear(x, weight) -> out``: ``x @ weight.T``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

OPS = ("rms_norm", "rotary_embedding", "silu_and_mul", "linear")


def platform_op(name: str) -> Callable | None:
    """The current platform's kernel for ``name``, or None to use torch's."""
    from conformance.reference_engine.platforms import get_current_platform

    if name not in OPS:
        raise ValueError(f"unknown op {name!r} (known: {OPS})")
    platform = get_current_platform()
    module_name = getattr(platform, "custom_ops_module", None)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise ImportError(
            f"platform {platform.device_name!r} names custom_ops_module {module_name!r}, "
            f"which fails to import: {type(error).__name__}: {error}"
        ) from error
    return getattr(module, name, None)
