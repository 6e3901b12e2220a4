"""The kernels a platform names for the model's per-token ops, resolved once per model.

The ops and their signatures are part of the contract (``conformance.contract.
custom_ops``); each layer here keeps torch's implementation, ``forward_native``, as the
reference, and calls the platform's kernel instead where it is given one.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

from conformance.contract.custom_ops import OPS
from conformance.contract.platform import Platform


@dataclasses.dataclass(frozen=True)
class CustomOps:
    """A platform's kernels, one field per op of ``OPS``; None runs torch's layer."""

    rms_norm: Callable | None = None
    rotary_embedding: Callable | None = None
    silu_and_mul: Callable | None = None
    linear: Callable | None = None

    @classmethod
    def of(cls, platform: type[Platform]) -> CustomOps:
        """The kernels in ``platform.custom_ops_module`` (none when it names none)."""
        module_name = getattr(platform, "custom_ops_module", None)
        if module_name is None:
            return cls()
        try:
            module = importlib.import_module(module_name)
        except Exception as error:
            raise ImportError(
                f"platform {platform.device_name!r} names custom_ops_module {module_name!r}, "
                f"which fails to import: {type(error).__name__}: {error}"
            ) from error
        return cls(**{name: getattr(module, name, None) for name in OPS})
