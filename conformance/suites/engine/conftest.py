"""Fixtures of the Engine suite."""

from __future__ import annotations

import pytest

from conformance.suites.engine.generations import Generations


@pytest.fixture(scope="session")
def generations(platform) -> Generations:
    """The plugin's and the reference's generations, made on first use, once."""
    return Generations(platform)
