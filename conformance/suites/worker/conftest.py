"""Fixtures of the Worker suite: the script run once per session on the reference
worker and on the plugin's (in process), since the tests only read the results."""

from __future__ import annotations

import pytest

from conformance.suites.engine.closeness import tolerance_for
from conformance.suites.worker import driving


@pytest.fixture(scope="session")
def worker_dtype(platform):
    return driving.suite_dtype(platform)


@pytest.fixture(scope="session")
def tolerance(worker_dtype):
    return tolerance_for(worker_dtype)


@pytest.fixture(scope="session")
def worker_config(platform, worker_dtype):
    """The tiny model's engine config on the platform under test."""
    return driving.engine_config(platform, worker_dtype)


@pytest.fixture(scope="session")
def steps(worker_config):
    return driving.script(worker_config.block_size)


@pytest.fixture(scope="session")
def reference_run(worker_dtype, worker_config, steps):
    """The script on the reference platform's worker, same model, dtype and block size."""
    reference = driving.reference_platform()
    config = driving.engine_config(reference, worker_dtype, block_size=worker_config.block_size)
    return driving.run_in_process(reference, config, steps)


@pytest.fixture(scope="session")
def plugin_run(platform, worker_config, steps):
    """The script on the plugin's worker, in this process."""
    return driving.run_in_process(platform, worker_config, steps)
