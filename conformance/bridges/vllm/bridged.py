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

from conformance.bridges.vllm.discovery import vllm_plugin
from conformance.bridges.vllm.platform import VllmBridgedPlatform, bridge_platform
from conformance.bridges.vllm.versions import installed_vllm
from conformance.contract.discovery import PlatformPluginError


@functools.cache
def _bridged(name: str) -> type[VllmBridgedPlatform]:
    installed_vllm()
    qualname = vllm_plugin(name)[0]()
    if qualname is None:
        raise PlatformPluginError(f"vLLM's platform plugin {name!r} reports that its "
                                  "device is not usable here (it returned None)")
    import vllm.platforms

    vllm_platform = pkgutil.resolve_name(qualname)()
    vllm.platforms.current_platform = vllm_platform
    return bridge_platform(name, vllm_platform)


def __getattr__(name: str) -> type[VllmBridgedPlatform]:
    if name.startswith("__"):
        raise AttributeError(name)
    return _bridged(name)
