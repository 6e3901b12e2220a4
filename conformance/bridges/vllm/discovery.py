"""The kit's plugin entry for ``--platform=vllm:NAME`` (the ``vllm`` namespace's
function in ``conformance.platform_namespaces``).

NAME is found the way vLLM finds it (``lookup``). The kit sees a plugin entry of its
own: ``conformance.bridges.vllm.plugins:NAME``, a function that calls vLLM's and names
the bridged platform ``bridged.NAME``. The entry's ``bridge`` part goes into the
record: vLLM's version, the supported range it falls in (and the union of all, as
``supported_versions``), that range's mustpass profile, the suites, and
what the run tests of the plugin (``tested``: its attention backend's class and what
its config hook changes of the kit's requests).
"""

from __future__ import annotations

from importlib import metadata

from conformance.bridges.vllm.lookup import VLLM_PLUGIN_GROUP, vllm_plugin
from conformance.bridges.vllm.tested import tested
from conformance.bridges.vllm.versions import installed_range, installed_vllm, union_specifier
from conformance.contract.discovery import PluginEntry

#: The suites a bridged run collects when ``--suite`` is not given (the Engine suite
#: judges ``vllm.LLM`` itself).
MAPPED_SUITES = ("platform", "attention", "communicator", "worker", "engine")
NOT_SUPPORTED_SUITES = {
    "worker": "vLLM's worker interface does not map onto the kit's: it takes vLLM's own "
              "SchedulerOutput and KVCacheConfig and answers through sample_tokens",
}


def find_plugin(name: str) -> PluginEntry:
    """The kit's plugin entry for vLLM's plugin ``name`` (the ``vllm`` namespace's
    function in ``conformance.platform_namespaces``)."""
    interface_version = installed_vllm()[1]
    supported = installed_range()
    _, value, distribution, version = vllm_plugin(name)
    return PluginEntry(
        name=f"vllm:{name}",
        value=value,
        distribution=distribution,
        version=version,
        entry_point=metadata.EntryPoint(
            name=f"vllm:{name}", value=f"conformance.bridges.vllm.plugins:{name}",
            group=VLLM_PLUGIN_GROUP),
        bridge={"interface": "vllm", "version": interface_version,
                "supported_versions": union_specifier(), "supported_range": supported.specifier,
                "profile": supported.profile,
                "suites": list(MAPPED_SUITES),
                "not_supported_suites": dict(NOT_SUPPORTED_SUITES), **tested(name)},
    )
