"""Worker suite, memory: what the worker reports for the KV cache, and that it gives
the device memory back on shutdown."""

from __future__ import annotations

import copy
import gc
import pkgutil

import pytest

from conformance.reference_engine.executor import UniProcExecutor
from conformance.reference_engine.models.config import get_model_config
from conformance.reference_engine.worker.model_runner import kv_cache_block_bytes
from conformance.suites.worker import driving

#: Two memory fractions the worker must keep within.
FRACTIONS = (0.3, 0.6)
#: KV cache of the shutdown check: large enough to stand out of allocator noise.
CACHE_BYTES = 256 * 1024 * 1024


@pytest.mark.contract("worker.memory.available_bounds")
def test_available_memory_within_device(platform, plugin_run):
    """Reads the first ``determine_available_memory()`` answer of the session's plugin
    run and checks its type and its bounds against ``get_device_total_memory`` of
    device 0, the one a single-rank worker uses."""
    total = platform.get_device_total_memory(0)
    available = plugin_run.available_memory[0]
    assert isinstance(available, int), f"available memory {available!r} is not an int"
    assert 0 < available <= total, f"available memory {available} bytes, device total {total}"


@pytest.mark.contract("worker.memory.stable")
def test_available_memory_stable(plugin_run):
    """Compares the two ``determine_available_memory()`` answers the session's plugin
    run asks for in a row, before initialising the cache."""
    first, second = plugin_run.available_memory
    assert first == second, f"available memory {first} then {second} bytes"


@pytest.mark.contract("worker.memory.fraction")
@pytest.mark.parametrize("fraction", FRACTIONS)
def test_available_memory_honours_fraction(platform, worker_config, fraction):
    """For memory fractions 0.3 and 0.6, builds a fresh ``UniProcExecutor``, measures
    the ``memory_allocated`` growth while it loads the model, and compares its available
    memory with ``f * total - held``."""
    index = 0  # the single-rank worker's device
    config = driving.engine_config(platform, worker_config.dtype, worker_config.model,
                                   block_size=worker_config.block_size, memory_fraction=fraction)
    gc.collect()
    before = platform.memory_allocated(index)
    executor = UniProcExecutor(config)
    try:
        held = max(0, platform.memory_allocated(index) - before)
        available = executor.collective_rpc("determine_available_memory")[0]
    finally:
        executor.shutdown()
    total = platform.get_device_total_memory(index)
    assert available <= fraction * total - held, (
        f"memory_fraction={fraction}: available {available / 2**20:.0f} MiB, above "
        f"{fraction} x {total / 2**20:.0f} MiB less the worker's {held / 2**20:.0f} MiB")


@pytest.mark.contract("worker.memory.shutdown_releases")
def test_shutdown_gives_memory_back(platform, worker_config, steps):
    """Builds a worker with a 256 MiB KV cache and runs the first step, reading
    ``memory_allocated`` before, once loaded and after shutdown (executor still
    referenced): growth of 128 MiB or more, at most half kept."""
    index = 0  # the single-rank worker's device
    backend = pkgutil.resolve_name(worker_config.attention_backend)
    block_bytes = kv_cache_block_bytes(worker_config, get_model_config(worker_config.model), backend)
    gc.collect()
    platform.synchronize()
    before = platform.memory_allocated(index)
    executor = UniProcExecutor(worker_config)
    try:
        executor.collective_rpc("initialize_cache", (CACHE_BYTES // block_bytes,))
        executor.execute_model(copy.deepcopy(steps[0].output))
        platform.synchronize()
        loaded = platform.memory_allocated(index)
    finally:
        executor.shutdown()
    gc.collect()
    platform.synchronize()
    after = platform.memory_allocated(index)
    grown = loaded - before
    assert grown >= CACHE_BYTES / 2, (
        f"memory_allocated grew by {grown / 2**20:.0f} MiB for a {CACHE_BYTES / 2**20:.0f} MiB "
        "KV cache: it does not see the worker's memory")
    kept = after - before
    assert kept <= grown / 2, (
        f"after shutdown {kept / 2**20:.0f} MiB of the {grown / 2**20:.0f} MiB the worker "
        "took is still allocated")
