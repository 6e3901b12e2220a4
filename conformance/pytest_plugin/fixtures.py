"""Fixtures the suites use, and that a plugin's own tests may use too.

Registered only when pytest runs with ``--platform``. The plugin under test is
resolved once, kept on the pytest config, and handed to whatever needs it through
the ``platform`` fixture: the engine and the rank processes are told it explicitly.
"""

from __future__ import annotations

import pytest
import torch

from conformance.contract.capabilities import PlatformCapabilities
from conformance.contract.discovery import PluginEntry, find_plugin, load_platform
from conformance.contract.platform import Platform

_PLATFORM_KEY = pytest.StashKey[type[Platform]]()
_under_test: type[Platform] | None = None


def select_platform(config: pytest.Config, name: str) -> type[Platform]:
    """Resolve plugin ``name`` as the platform under test of this run."""
    global _under_test
    platform = _under_test = load_platform(name)
    config.stash[_PLATFORM_KEY] = platform
    return platform


def platform_under_test(config: pytest.Config) -> type[Platform]:
    return config.stash[_PLATFORM_KEY]


class _CurrentPlatform:
    """``conformance.current_platform``: the plugin under test of a ``pytest
    --platform`` run in this process, kept for plugin code written against the first
    release. Engine code is handed its platform (a worker reads
    ``self.config.platform``), which also works in the processes an engine spawns."""

    def __getattr__(self, name: str):
        if _under_test is None:
            raise RuntimeError(
                "current_platform is set only in a `pytest --platform=NAME` process; "
                "a worker finds its platform in self.config.platform"
            )
        return getattr(_under_test, name)


current_platform = _CurrentPlatform()


@pytest.fixture(scope="session")
def platform(pytestconfig: pytest.Config) -> type[Platform]:
    """The ``Platform`` subclass under test (the one ``--platform`` selected)."""
    return pytestconfig.stash[_PLATFORM_KEY]


@pytest.fixture(scope="session")
def platform_name(pytestconfig: pytest.Config) -> str:
    """The entry-point name given to ``--platform``."""
    return pytestconfig.option.platform


@pytest.fixture(scope="session")
def plugin_entry(platform_name: str) -> PluginEntry:
    """The installed plugin under test: entry point, distribution and version."""
    return find_plugin(platform_name)


@pytest.fixture(scope="session")
def capabilities(platform: type[Platform]) -> PlatformCapabilities:
    """What the platform under test declares it supports."""
    return platform.capabilities


@pytest.fixture
def device(platform: type[Platform]) -> torch.device:
    """Device 0 of the platform as a ``torch.device``: every available platform has
    it, and naming it here keeps a broken ``current_device()`` (its own contract's
    failure) from masking every other rule's check."""
    return platform.torch_device(0)
