"""The kit-side plugin function of every vLLM platform plugin, by name.

``plugins.NAME`` is a zero-argument function, as the kit's discovery protocol asks:
it calls vLLM's plugin function ``NAME`` and, when that names a platform, answers with
the bridged platform's qualified name (``conformance.bridges.vllm.bridged:NAME``); None
when vLLM's answers None (the device is unusable here).
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.bridges.vllm.lookup import vllm_plugin


def __getattr__(name: str) -> Callable[[], str | None]:
    if name.startswith("__"):
        raise AttributeError(name)
    function = vllm_plugin(name)[0]

    def bridged_plugin() -> str | None:
        if function() is None:
            return None
        return f"conformance.bridges.vllm.bridged:{name}"

    bridged_plugin.__qualname__ = bridged_plugin.__name__ = name
    return bridged_plugin
