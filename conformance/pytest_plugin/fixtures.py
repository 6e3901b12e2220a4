"""Fixtures the suites use, and that a plugin's own tests may use too.

Registered only when pytest runs with ``--platform``.
"""

from __future__ import annotations

import pytest
import torch

from conformance.reference_engine.platforms import (
    Platform,
    PlatformCapabilities,
    set_current_platform,
)
from conformance.reference_engine.platforms.discovery import PluginEntry, find_plugin

_PLATFORM_KEY = pytest.StashKey[type[Platform]]()


def select_platform(config: pytest.Config, name: str) -> type[Platform]:
    """Make plugin ``name`` this process's (and its children's) current platform."""
    platform = set_current_platform(name)
    config.stash[_PLATFORM_KEY] = platform
    return platform


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
    """The platform's current device as a ``torch.device``."""
    return platform.torch_device()
