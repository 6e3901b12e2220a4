"""Hardware conformance kit for inference-engine platform plugins.

A plugin author imports the contract from here::

    from conformance import Platform, PlatformCapabilities, WorkerBase
    from conformance import AttentionBackend, AttentionImpl, DeviceCommunicatorBase

Names are imported on first use: this package is imported by pytest in every project
where the kit is installed (through its pytest plugin), and must cost nothing there.
"""

import importlib

from conformance._version import __version__

_EXPORTS = {
    "CONTRACT_VERSION": "conformance.reference_engine.platforms",
    "DeviceCapability": "conformance.reference_engine.platforms",
    "Platform": "conformance.reference_engine.platforms",
    "PlatformCapabilities": "conformance.reference_engine.platforms",
    "PlatformPluginError": "conformance.reference_engine.platforms",
    "current_platform": "conformance.reference_engine.platforms",
    "AttentionBackend": "conformance.reference_engine.attention.backend",
    "AttentionImpl": "conformance.reference_engine.attention.backend",
    "AttentionMetadata": "conformance.reference_engine.attention.backend",
    "AttentionSelectorConfig": "conformance.reference_engine.attention.backend",
    "DeviceCommunicatorBase": "conformance.reference_engine.distributed.communicator",
    "EngineConfig": "conformance.reference_engine.config",
    "WorkerBase": "conformance.reference_engine.worker.worker_base",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
