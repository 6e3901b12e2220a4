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

from conformance.bridges.vllm.errors import named_class
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

    # As vLLM's resolution does (the class by its qualified name, then an instance);
    # what the plugin got wrong is named by the plugin's own names, never the bridge's.
    platform_class = named_class(qualname, VllmPlatform, f"vLLM platform plugin {name!r} ({value}) names",
                                 PlatformPluginError)
    vllm_platform = platform_class()
    vllm.platforms.current_platform = vllm_platform
    return bridge_platform(name, vllm_platform)


def __getattr__(name: str) -> type[VllmBridgedPlatform]:
    if name.startswith("__"):
        raise AttributeError(name)
    return _bridged(name)
