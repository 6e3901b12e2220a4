"""Platforms: the contract, discovery, and the platform selected for this process.

``current_platform`` is the ``Platform`` subclass this process runs on. The harness
selects it with ``set_current_platform(name)``, which also records the name in the
environment variable ``CONFORMANCE_PLATFORM`` so that every process the kit spawns
resolves the same plugin. Without a selection, the first usable built-in platform is
taken (``cuda``, then ``cpu``), as vLLM auto-detects its platform.
"""

from __future__ import annotations

import os

from conformance.reference_engine.platforms.capabilities import (
    KNOWN_FEATURES,
    DeviceCapability,
    PlatformCapabilities,
)
from conformance.reference_engine.platforms.discovery import (
    ENTRY_POINT_GROUP,
    PlatformPluginError,
    installed_plugins,
    load_platform,
)
from conformance.reference_engine.platforms.interface import CONTRACT_VERSION, Platform

PLATFORM_ENV_VAR = "CONFORMANCE_PLATFORM"
_AUTO_DETECT_ORDER = ("cuda", "cpu")

_selected: type[Platform] | None = None


def set_current_platform(name: str) -> type[Platform]:
    """Select the platform plugin ``name`` for this process and its children."""
    global _selected
    _selected = load_platform(name)
    os.environ[PLATFORM_ENV_VAR] = name
    return _selected


def get_current_platform() -> type[Platform]:
    """The selected platform class, resolving it on first use."""
    global _selected
    if _selected is None:
        name = os.environ.get(PLATFORM_ENV_VAR)
        if name:
            _selected = load_platform(name)
        else:
            _selected = _auto_detect()
    return _selected


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
]
