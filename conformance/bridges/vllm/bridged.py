"""The bridged platforms, by vLLM plugin name: ``bridged.cpu`` is the kit ``Platform``
around vLLM's ``cpu`` platform.

Built on first access in each process (rank processes unpickle the class by this
qualified name and build it again there). Building one makes its vLLM platform
vLLM's ``current_platform`` in the process, as vLLM's own plugin resolution would, so
vLLM's layers, selectors and communicators see the plugin under test, whatever other
plugins are installed.
"""

from __future__ import annotations

import functools
import pkgutil

from conformance.bridges.vllm.lookup import vllm_plugin
from conformance.bridges.vllm.platform import VllmBridgedPlatform, bridge_platform
from conformance.bridges.vllm.versions import installed_vllm
from conformance.contract.discovery import PlatformPluginError


@functools.cache
def _bridged(name: str) -> type[VllmBridgedPlatform]:
    installed_vllm()
    function, value = vllm_plugin(name)[:2]
    qualname = function()
    if qualname is None:
        raise PlatformPluginError(f"vLLM's platform plugin {name!r} reports that its "
                                  "device is not usable here (it returned None)")
    import vllm.platforms
    from vllm.platforms.interface import Platform as VllmPlatform

    # As vLLM's resolution does (resolve_obj_by_qualname, then an instance); what the
    # plugin got wrong is named by the plugin's own names, never the bridge's.
    try:
        platform_class = pkgutil.resolve_name(qualname)
    except Exception as exc:
        raise PlatformPluginError(
            f"vLLM platform plugin {name!r} ({value}) names {qualname!r}, which does not "
            f"import: {type(exc).__name__}: {exc}") from exc
    if not (isinstance(platform_class, type) and issubclass(platform_class, VllmPlatform)):
        raise PlatformPluginError(
            f"vLLM platform plugin {name!r} ({value}) names {qualname!r}, which is "
            f"{platform_class!r}, not a subclass of vLLM's Platform")
    vllm_platform = platform_class()
    vllm.platforms.current_platform = vllm_platform
    return bridge_platform(name, vllm_platform)


def __getattr__(name: str) -> type[VllmBridgedPlatform]:
    if name.startswith("__"):
        raise AttributeError(name)
    return _bridged(name)
