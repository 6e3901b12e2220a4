"""Platforms: the contract, discovery, and the platform selected for this process.

``current_platform`` is the ``Platform`` subclass this process runs on. The harness
selects it with ``set_current_platform(name)`` (or ``use_platform`` for a block),
which also records it in the environment variable ``CONFORMANCE_PLATFORM`` so that
every process the kit spawns resolves the same platform. Without a selection, the first usable built-in platform is
taken (``cuda``, then ``cpu``), as vLLM auto-detects its platform.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from conformance.reference_engine.platforms.capabilities import (
    KNOWN_FEATURES,
    DeviceCapability,
    PlatformCapabilities,
)
from conformance.reference_engine.platforms.discovery import (
    ENTRY_POINT_GROUP,
    PlatformPluginError,
    import_qualname,
    installed_plugins,
    load_platform,
)
from conformance.reference_engine.platforms.interface import CONTRACT_VERSION, Platform

PLATFORM_ENV_VAR = "CONFORMANCE_PLATFORM"
#: How the environment names a platform class that no entry point registers.
_CLASS_PREFIX = "class:"
_AUTO_DETECT_ORDER = ("cuda", "cpu")

_selected: type[Platform] | None = None


def set_current_platform(spec: str | type[Platform]) -> type[Platform]:
    """Select the platform for this process and the processes it spawns: ``spec`` is
    an installed plugin's name, or a ``Platform`` subclass that no entry point
    registers (a test's platform, say; it must be importable by its qualified name)."""
    global _selected
    if isinstance(spec, str):
        platform, name = load_platform(spec), spec
    elif isinstance(spec, type) and issubclass(spec, Platform):
        platform, name = spec, f"{_CLASS_PREFIX}{spec.__module__}.{spec.__qualname__}"
    else:
        raise ValueError(f"a platform is a plugin name or a Platform subclass, not {spec!r}")
    _selected = platform
    os.environ[PLATFORM_ENV_VAR] = name
    return platform


@contextlib.contextmanager
def use_platform(spec: str | type[Platform]) -> Iterator[type[Platform]]:
    """``spec`` is the current platform inside the block; the previous selection,
    and the environment that carries it to child processes, come back after it."""
    global _selected
    previous, previous_name = _selected, os.environ.get(PLATFORM_ENV_VAR)
    try:
        yield set_current_platform(spec)
    finally:
        _selected = previous
        if previous_name is None:
            os.environ.pop(PLATFORM_ENV_VAR, None)
        else:
            os.environ[PLATFORM_ENV_VAR] = previous_name


def get_current_platform() -> type[Platform]:
    """The selected platform class, resolving it on first use."""
    global _selected
    if _selected is None:
        name = os.environ.get(PLATFORM_ENV_VAR)
        if not name:
            _selected = _auto_detect()
        elif name.startswith(_CLASS_PREFIX):
            _selected = _import_platform_class(name.removeprefix(_CLASS_PREFIX))
        else:
            _selected = load_platform(name)
    return _selected


def _import_platform_class(qualname: str) -> type[Platform]:
    platform = import_qualname(qualname)
    if not (isinstance(platform, type) and issubclass(platform, Platform)):
        raise PlatformPluginError(f"{PLATFORM_ENV_VAR} names {qualname}, not a Platform subclass")
    return platform


def _auto_detect() -> type[Platform]:
    for name in _AUTO_DETECT_ORDER:
        try:
            return load_platform(name)
        except PlatformPluginError:
            continue
    raise PlatformPluginError("no built-in platform is usable (tried cuda and cpu)")


class _CurrentPlatform:
    """Attribute access forwards to the selected platform class (resolved lazily, so
    importing the engine selects nothing and initialises no device)."""

    def __getattr__(self, name: str):
        return getattr(get_current_platform(), name)

    def __repr__(self) -> str:
        return f"<current_platform {get_current_platform().__qualname__}>"


current_platform = _CurrentPlatform()

__all__ = [
    "CONTRACT_VERSION",
    "ENTRY_POINT_GROUP",
    "KNOWN_FEATURES",
    "PLATFORM_ENV_VAR",
    "DeviceCapability",
    "Platform",
    "PlatformCapabilities",
    "PlatformPluginError",
    "current_platform",
    "get_current_platform",
    "installed_plugins",
    "load_platform",
    "set_current_platform",
    "use_platform",
]
