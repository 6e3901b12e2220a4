"""The built-in platforms (``cpu``, ``cuda``), and resolving the platform an engine is
given.

An engine is handed its platform once, as a plugin name or a ``Platform`` subclass,
and passes the resolved class down in its config; nothing here is process state.
Without a platform, the first usable built-in one is taken (``cuda``, then ``cpu``),
as vLLM auto-detects its platform.
"""

from __future__ import annotations

from conformance.contract.discovery import PlatformPluginError, load_platform
from conformance.contract.platform import Platform

PlatformSpec = str | type[Platform] | None
_AUTO_DETECT_ORDER = ("cuda", "cpu")


def resolve_platform(spec: PlatformSpec) -> type[Platform]:
    """The ``Platform`` class ``spec`` names: an installed plugin's name, a subclass
    itself, or None for the first usable built-in platform."""
    if spec is None:
        return _auto_detect()
    if isinstance(spec, str):
        return load_platform(spec)
    if isinstance(spec, type) and issubclass(spec, Platform):
        return spec
    raise ValueError(f"a platform is a plugin name or a Platform subclass, not {spec!r}")


def _auto_detect() -> type[Platform]:
    for name in _AUTO_DETECT_ORDER:
        try:
            return load_platform(name)
        except PlatformPluginError:
            continue
    raise PlatformPluginError("no built-in platform is usable (tried cuda and cpu)")
