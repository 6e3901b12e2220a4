"""Where a record came from: kit, contract, suites, plugin, device, host.

The platform is asked through its own runtime methods; a plugin that raises there is
recorded, not fatal (the suites report the broken rule itself).
"""

from __future__ import annotations

import platform as host_platform
import socket

import torch

from conformance._version import __version__
from conformance.contract.discovery import PluginEntry
from conformance.contract.platform import Platform
from conformance.contract.version import CONTRACT_VERSION
from conformance.reference_engine.kernels.cpu import native as cpu_kernels
from conformance.results.ci_provenance import ci_provenance, preflight_findings
from conformance.results.identity import MAX_NAME_LENGTH
from conformance.results.provenance import suite_hash


def _ask(query, default=None):
    """Call a platform query for the record, the error in the value if it raises:
    its type and the start of its message, within the record's limit on a name's
    length (the test of that query reports the whole message)."""
    try:
        return query()
    except Exception as exc:  # the plugin's bug, reported in the value
        if default is not None:
            return default
        shown = f"<error: {type(exc).__name__}: {' '.join(str(exc).split())}"
        return shown[:MAX_NAME_LENGTH - 2] + "…>" if len(shown) >= MAX_NAME_LENGTH else shown + ">"


def describe_device(platform: type[Platform]) -> dict:
    capability = _ask(platform.get_device_capability)
    device = {
        "type": platform.device_type,
        "name": str(_ask(platform.get_device_name)),
        "count": _ask(platform.device_count),
        "capability": capability.as_version_str() if hasattr(capability, "as_version_str")
        else (None if capability is None else str(capability)),
        "total_memory": _ask(platform.get_device_total_memory),
        "capabilities": _ask(platform.capabilities.as_record),
    }
    # Under CI, the agent's hardware state as its pre-flight found it (driver,
    # firmware, health output), part of the record from its first write.
    preflight = preflight_findings()
    if preflight is not None:
        device["preflight"] = preflight
    return device


def collect_provenance(
    entry: PluginEntry, platform: type[Platform], command_line: list[str]
) -> dict:
    """The record's provenance; under Buildkite also the build that made it."""
    provenance = {
        "kit_version": __version__,
        "contract_version": CONTRACT_VERSION,
        "suite_hash": suite_hash(),
        "plugin": {
            "name": entry.name,
            "distribution": entry.distribution,
            "version": entry.version,
            "platform_class": f"{platform.__module__}.{platform.__qualname__}",
            **({"bridge": entry.bridge} if entry.bridge is not None else {}),
        },
        "device": describe_device(platform),
        "torch_version": torch.__version__,
        "python_version": host_platform.python_version(),
        "host": {
            "hostname": socket.gethostname(),
            "os": host_platform.platform(),
            "machine": host_platform.machine(),
            # The ISA variant of the reference engine's C kernels on this host.
            "cpu_kernels": str(_ask(cpu_kernels.describe)),
        },
        "command_line": [str(arg) for arg in command_line],
    }
    if entry.bridge is not None and entry.bridge.get("profile"):
        provenance["mustpass_profile"] = entry.bridge["profile"]
    ci = ci_provenance()
    if ci is not None:
        provenance["ci"] = ci
    return provenance
