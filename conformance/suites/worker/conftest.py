"""Fixtures of the Worker suite: the script run once per session on the reference
worker and on the plugin's (in process), since the tests only read the results."""

from __future__ import annotations

import pytest

from conformance.suites import model_settings
from conformance.suites.closeness import tolerance_for
from conformance.suites.worker import driving


@pytest.fixture(scope="session")
def tolerance(suite_dtype):
    """How close the plugin's steps must be to the reference's, in the suite's dtype."""
    return tolerance_for(suite_dtype)


@pytest.fixture(scope="session")
def worker_config(platform, suite_dtype):
    """The tiny model's engine config on the platform under test, in a head size, dtype
    and block size it declares (``not_supported`` where the reference cannot run it)."""
    model_settings.require_reference_runs(platform)
    return driving.engine_config(platform, suite_dtype, model_settings.model_for(platform))


@pytest.fixture(scope="session")
def steps(worker_config):
    """The script's scheduler steps, paged in the plugin's block size."""
    return driving.script(worker_config.block_size)


@pytest.fixture(scope="session")
def reference_run(suite_dtype, worker_config, steps):
    """The script on the reference platform's worker, same model, dtype and block size."""
    reference = model_settings.reference_platform()
    config = driving.engine_config(reference, suite_dtype, worker_config.model,
                                   block_size=worker_config.block_size)
    return driving.run_in_process(config, steps)


@pytest.fixture(scope="session")
def plugin_run(worker_config, steps):
    """The script on the plugin's worker, in this process."""
    return driving.run_in_process(worker_config, steps)


@pytest.fixture(scope="session")
def plugin_rerun(plugin_run, worker_config, steps):
    """The script again, on a second worker built from the same config (the same
    engine seed), after ``plugin_run``'s worker has drawn from the generator."""
    return driving.run_in_process(worker_config, steps)
