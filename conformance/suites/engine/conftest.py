"""Fixtures of the Engine suite."""

from __future__ import annotations

import pytest

from conformance.suites import model_settings
from conformance.suites.engine.generations import Generations


@pytest.fixture(scope="session")
def generations(platform) -> Generations:
    """The plugin's and the reference's generations, made on first use, once
    (``not_supported`` where the reference cannot run the plugin's model)."""
    model_settings.require_reference_runs(platform)
    return Generations(platform)
