"""Finding a vLLM platform plugin the way vLLM finds it, by name.

vLLM's plugin functions follow the kit's own discovery protocol (a zero-argument
function returning a class's qualified name, or None when its device is unusable), so
NAME is looked up where vLLM looks, among the built-in detectors
(``vllm.platforms.builtin_platform_plugins``) and the entry points of the group
``vllm.platform_plugins`` (which win, as in vLLM), and called unchanged. Unlike vLLM,
the plugin is chosen by name, never by "the only one that answers", so a vendor can
check their plugin on a machine where several are installed.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata

from conformance.bridges.vllm.versions import installed_vllm
from conformance.contract.discovery import PlatformPluginError

VLLM_PLUGIN_GROUP = "vllm.platform_plugins"


def _plugin_entry_points() -> dict[str, metadata.EntryPoint]:
    return {e.name: e for e in metadata.entry_points(group=VLLM_PLUGIN_GROUP)}


def _builtin_detectors() -> dict[str, Callable[[], str | None]]:
    from vllm.platforms import builtin_platform_plugins

    return dict(builtin_platform_plugins)


def vllm_plugin(name: str) -> tuple[Callable[[], str | None], str, str, str]:
    """vLLM's plugin function called ``name``, with where it comes from: its import
    path, distribution and version (an out-of-tree plugin's own; vLLM's for a
    built-in)."""
    entry_points = _plugin_entry_points()
    if name in entry_points:
        entry_point = entry_points[name]
        dist = entry_point.dist
        try:
            function = entry_point.load()
        except Exception as exc:
            raise PlatformPluginError(
                f"vLLM platform plugin {name!r} ({entry_point.value}) failed to import: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return (function, entry_point.value,
                dist.metadata["Name"] if dist else "<unknown distribution>",
                dist.version if dist else "?")
    detectors = _builtin_detectors()
    if name in detectors:
        function = detectors[name]
        return (function, f"{function.__module__}:{function.__qualname__}", *installed_vllm())
    known = ", ".join(sorted({*detectors, *entry_points}))
    raise PlatformPluginError(
        f"vLLM has no platform plugin named {name!r} (built-in detectors and "
        f"{VLLM_PLUGIN_GROUP} entry points: {known})"
    )
