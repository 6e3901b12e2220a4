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
    """``determine_available_memory()`` after loading the model is a positive int, not
    above the device's total memory."""
    total = platform.get_device_total_memory(platform.current_device())
    available = plugin_run.available_memory[0]
    assert isinstance(available, int), f"available memory {available!r} is not an int"
    assert 0 < available <= total, f"available memory {available} bytes, device total {total}"


@pytest.mark.contract("worker.memory.stable")
def test_available_memory_stable(plugin_run):
    """Asked twice in a row, ``determine_available_memory()`` answers the same."""
    first, second = plugin_run.available_memory
    assert first == second, f"available memory {first} then {second} bytes"


@pytest.mark.contract("worker.memory.fraction")
@pytest.mark.parametrize("fraction", FRACTIONS)
def test_available_memory_honours_fraction(platform, worker_config, fraction):
    """With ``memory_fraction`` f, ``determine_available_memory()`` is at most f times
    the device's total memory, less what the worker itself took on the device in
    loading the model."""
    index = platform.current_device()
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
    """After ``shutdown()`` (the worker object still alive, as an executor keeps it),
    ``memory_allocated()`` falls back by at least half of what loading the model and
    a large KV cache added (the growth must show at least half the cache's size)."""
    index = platform.current_device()
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
