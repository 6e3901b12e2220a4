"""The plugin contract: everything a platform plugin implements or is handed.

One module per interface, each rule stated once, in the docstring of what it governs:

- ``platform``: ``Platform``, the class a plugin registers (identity, declared
  capabilities, device runtime, factories, config hooks);
- ``torch_device``: ``TorchDevicePlatform``, a ``Platform`` whose device runtime is
  forwarded to a torch device module (``torch.cuda``, ``torch.xpu``, ...);
- ``capabilities``: ``PlatformCapabilities`` and ``DeviceCapability``;
- ``attention``: ``AttentionBackend``, ``AttentionImpl``, ``AttentionMetadata``,
  ``AttentionSelectorConfig``;
- ``worker``: ``WorkerBase`` and the step objects it exchanges with the scheduler;
- ``communicator``: ``DeviceCommunicatorBase``;
- ``config``: ``EngineConfig``, what the config hooks see; ``sampling_params``:
  ``SamplingParams``, which requests carry;
- ``custom_ops``: the optional per-token kernels a platform may provide;
- ``discovery``: entry points, and the one-line errors of a plugin that goes wrong;
- ``version``: ``CONTRACT_VERSION``.

This package imports no other part of the kit. Its names are imported on first use,
so that ``conformance.contract.version`` (read by the verifier and the support
matrix) costs no torch import.
"""

import importlib

_EXPORTS = {
    "CONTRACT_VERSION": "version",
    "DeviceCapability": "capabilities",
    "KNOWN_FEATURES": "capabilities",
    "PlatformCapabilities": "capabilities",
    "Platform": "platform",
    "TorchDevicePlatform": "torch_device",
    "AttentionBackend": "attention",
    "AttentionImpl": "attention",
    "AttentionMetadata": "attention",
    "AttentionSelectorConfig": "attention",
    "WorkerBase": "worker",
    "ScheduledRequest": "worker",
    "SchedulerOutput": "worker",
    "ModelRunnerOutput": "worker",
    "DeviceCommunicatorBase": "communicator",
    "EngineConfig": "config",
    "SamplingParams": "sampling_params",
    "ENTRY_POINT_GROUP": "discovery",
    "PlatformPluginError": "discovery",
    "PluginEntry": "discovery",
    "find_plugin": "discovery",
    "installed_plugins": "discovery",
    "load_platform": "discovery",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
