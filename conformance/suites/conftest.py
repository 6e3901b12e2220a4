"""Fixtures more than one suite uses."""

from __future__ import annotations

import pytest
import torch

from conformance.suites import model_settings


@pytest.fixture(scope="session")
def suite_dtype(platform) -> torch.dtype:
    """The dtype the Worker and Engine suites run the tiny model in: float32 where
    the platform declares it (exact comparisons), else its first declared dtype."""
    return model_settings.suite_dtype(platform)
