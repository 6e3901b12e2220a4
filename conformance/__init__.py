"""Hardware conformance kit for inference-engine platform plugins.

A plugin author imports the contract (``conformance.contract``) from here::

    from conformance import Platform, PlatformCapabilities, WorkerBase
    from conformance import AttentionBackend, AttentionImpl, DeviceCommunicatorBase

Names are imported on first use: this package is imported by pytest in every project
where the kit is installed (through its pytest plugin), and must cost nothing there.
"""

import importlib

from conformance import contract
from conformance._version import __version__

__all__ = ["__version__", "current_platform", *contract.__all__]


def __getattr__(name: str):
    if name == "current_platform":  # the harness's plugin under test, not the contract's
        return importlib.import_module("conformance.pytest_plugin.fixtures").current_platform
    if name not in contract.__all__:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    return getattr(contract, name)


def __dir__() -> list[str]:
    return sorted(__all__)
