"""Where a record came from: kit, contract, suites, plugin, device, host."""

from __future__ import annotations

import hashlib
import platform as host_platform
import socket
from importlib import resources
from pathlib import Path

import torch

from conformance._version import __version__
from conformance.reference_engine.platforms import CONTRACT_VERSION, Platform
from conformance.reference_engine.platforms.discovery import PluginEntry


def suites_root() -> Path:
    return Path(str(resources.files("conformance") / "suites"))


def suite_hash(root: Path | None = None) -> str:
    """A digest of every suite source file, so a record says exactly what was run.

    Paths are hashed relative to the suites folder and in sorted order, so the hash
    is the same wherever and however the kit is installed.
    """
    root = suites_root() if root is None else root
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return f"sha256:{digest.hexdigest()}"


def _ask(query, default=None):
    """Call a platform query for the record; a plugin that raises here is recorded,
    not fatal (the suites report the broken rule itself)."""
    try:
        return query()
    except Exception as exc:  # the plugin's bug, reported in the value
        return f"<error: {type(exc).__name__}: {exc}>" if default is None else default


def describe_device(platform: type[Platform]) -> dict:
    capability = _ask(platform.get_device_capability)
    return {
        "type": platform.device_type,
        "name": str(_ask(platform.get_device_name)),
        "count": _ask(platform.device_count),
        "capability": capability.as_version_str() if hasattr(capability, "as_version_str")
        else (None if capability is None else str(capability)),
        "total_memory": _ask(platform.get_device_total_memory),
        "capabilities": _ask(platform.capabilities.as_record),
    }


def collect_provenance(
    entry: PluginEntry, platform: type[Platform], command_line: list[str]
) -> dict:
    return {
        "kit_version": __version__,
        "contract_version": CONTRACT_VERSION,
        "suite_hash": suite_hash(),
        "plugin": {
            "name": entry.name,
            "distribution": entry.distribution,
            "version": entry.version,
            "platform_class": f"{platform.__module__}.{platform.__qualname__}",
        },
        "device": describe_device(platform),
        "torch_version": torch.__version__,
        "python_version": host_platform.python_version(),
        "host": {
            "hostname": socket.gethostname(),
            "os": host_platform.platform(),
            "machine": host_platform.machine(),
        },
        "command_line": [str(arg) for arg in command_line],
    }
