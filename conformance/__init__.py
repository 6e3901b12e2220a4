"""Hardware conformance kit for inference-engine platform plugins.

A plugin author imports the contract from here::

    from conformance import Platform, PlatformCapabilities, WorkerBase
    from conformance import AttentionBackend, AttentionImpl, DeviceCommunicatorBase
"""

from conformance._version import __version__
from conformance.reference_engine.attention.backend import (
    AttentionBackend,
    AttentionImpl,
    AttentionMetadata,
    AttentionSelectorConfig,
)
from conformance.reference_engine.config import EngineConfig
from conformance.reference_engine.distributed.communicator import DeviceCommunicatorBase
from conformance.reference_engine.platforms import (
    CONTRACT_VERSION,
    DeviceCapability,
    Platform,
    PlatformCapabilities,
    PlatformPluginError,
    current_platform,
)
from conformance.reference_engine.worker.worker_base import WorkerBase

__all__ = [
    "CONTRACT_VERSION",
    "AttentionBackend",
    "AttentionImpl",
    "AttentionMetadata",
    "AttentionSelectorConfig",
    "DeviceCapability",
    "DeviceCommunicatorBase",
    "EngineConfig",
    "Platform",
    "PlatformCapabilities",
    "PlatformPluginError",
    "WorkerBase",
    "__version__",
    "current_platform",
]
