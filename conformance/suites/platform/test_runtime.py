"""Platform suite, runtime: the device runtime the engine calls (RFC #9268's list)."""

from __future__ import annotations

import gc
import time

import pytest
import torch

from conformance.suites.support import not_supported

#: Large enough to stand out of allocator and bookkeeping noise on any device.
_PROBE_BYTES = 64 * 1024 * 1024
#: Small enough that a host allocator serves it from its heap, not a mapping of its own.
_SMALL_BYTES = 64 * 1024


def _busy_work(device: torch.device) -> torch.Tensor:
    """Queue enough work that an asynchronous device is still busy right after."""
    matrix = torch.randn(256, 256, device=device)
    for _ in range(4):
        matrix = torch.tanh(matrix @ matrix)
    return matrix


@pytest.mark.contract("platform.runtime.availability")
def test_available_with_devices(platform):
    """Checks that ``is_available()`` is the object ``True``, not just truthy, and that
    ``device_count()`` is an int of at least 1, on the machine under test."""
    assert platform.is_available() is True
    assert isinstance(platform.device_count(), int) and platform.device_count() >= 1


@pytest.mark.contract("platform.runtime.current_device")
def test_set_device_round_trip(platform):
    """Sets each index below ``device_count()`` in turn with ``set_device`` and reads
    ``current_device()`` back, restoring the original device afterwards."""
    original = platform.current_device()
    try:
        for index in range(platform.device_count()):
            platform.set_device(torch.device(platform.device_type, index))
            assert platform.current_device() == index
    finally:
        platform.set_device(torch.device(platform.device_type, original))


@pytest.mark.contract("platform.runtime.synchronize")
def test_synchronize_completes_recorded_events(platform, device):
    """Queues four rounds of 256x256 matmul and tanh, records a ``platform.Event()``,
    calls ``synchronize()`` and checks ``event.query()`` is True."""
    _busy_work(device)
    event = platform.Event()
    event.record()
    platform.synchronize()
    assert event.query() is True, "an event recorded before synchronize() is not complete"


@pytest.mark.contract("platform.runtime.events")
def test_event_timing_is_ordered(platform, device):
    """Records three timing events around two batches of queued matmul work,
    synchronizes on the last, checks all three completed and that start-to-middle time
    lies between 0 and start-to-end time."""
    start, middle, end = (platform.Event(enable_timing=True) for _ in range(3))
    start.record()
    _busy_work(device)
    middle.record()
    _busy_work(device)
    end.record()
    end.synchronize()
    assert start.query() and middle.query() and end.query(), "events did not complete"
    first, total = start.elapsed_time(middle), start.elapsed_time(end)
    assert 0.0 <= first <= total, f"elapsed times not ordered: {first} ms, {total} ms"


#: The host's wait between two timing events: long against a device's timer resolution
#: and the cost of recording, short against the suite.
_HOST_WAIT_MS = 50.0


@pytest.mark.contract("platform.runtime.events")
def test_event_timing_is_in_milliseconds(platform):
    """On an idle device (after ``synchronize()``), records a timing event, waits
    ``_HOST_WAIT_MS`` on the host, records another and synchronizes on it:
    ``elapsed_time`` must be at least half the wait and at most twice the host's own
    measure from the first record to the second event's completion (a bound from the
    same run, so a loaded machine stretches both alike)."""
    start, end = platform.Event(enable_timing=True), platform.Event(enable_timing=True)
    platform.synchronize()
    host_started = time.perf_counter()
    start.record()
    time.sleep(_HOST_WAIT_MS / 1000)
    end.record()
    end.synchronize()
    host_ms = (time.perf_counter() - host_started) * 1000
    elapsed = start.elapsed_time(end)
    assert _HOST_WAIT_MS / 2 <= elapsed <= 2 * host_ms, (
        f"elapsed_time is {elapsed!r} across a {_HOST_WAIT_MS:g} ms wait that the host measured as "
        f"{host_ms:.1f} ms: not milliseconds")


def _settled_memory(platform, index: int) -> int:
    """``memory_allocated`` once released tensors are collected, the platform's cache
    emptied and its queued work done: live tensors are all it may count."""
    gc.collect()
    platform.empty_cache()
    platform.synchronize()
    return platform.memory_allocated(index)


@pytest.mark.contract("platform.runtime.memory")
def test_memory_allocated_follows_allocations(platform, device):
    """Allocates a 64 MiB tensor between settled reads of ``memory_allocated`` (after
    ``gc``, ``empty_cache`` and ``synchronize``): growth of at least 64 MiB, then,
    after ``del``, a fall of at least 32 MiB, on device 0."""
    index = device.index
    before = _settled_memory(platform, index)
    probe = torch.ones(_PROBE_BYTES // 4, dtype=torch.float32, device=device)
    during = _settled_memory(platform, index)
    assert during - before >= _PROBE_BYTES, (
        f"memory_allocated grew by {during - before} bytes for a {_PROBE_BYTES}-byte tensor"
    )
    del probe
    after = _settled_memory(platform, index)
    assert during - after >= _PROBE_BYTES // 2, (
        f"memory_allocated fell by only {during - after} bytes after release"
    )


@pytest.mark.contract("platform.runtime.memory")
def test_memory_allocated_counts_live_small_tensors(platform, device):
    """Allocates 1,024 tensors of 64 KiB (as an engine's many small buffers: each below
    the size a host allocator maps on its own), then releases 15 of every 16, so a few
    stay alive between the freed ones: ``memory_allocated`` grows by at least half of
    the 64 MiB, and falls by at least half of the 60 MiB released, on device 0. An
    allocator keeps such freed memory for reuse; the rule counts live tensors."""
    index, count, elements = device.index, 1024, _SMALL_BYTES // 4
    before = _settled_memory(platform, index)
    small = [torch.ones(elements, dtype=torch.float32, device=device) for _ in range(count)]
    during = _settled_memory(platform, index)
    assert during - before >= count * _SMALL_BYTES // 2, (
        f"memory_allocated grew by {during - before} bytes for {count} tensors of {_SMALL_BYTES} bytes"
    )
    alive = small[::16]
    released = (count - len(alive)) * _SMALL_BYTES
    del small
    after = _settled_memory(platform, index)
    assert during - after >= released // 2, (
        f"memory_allocated fell by only {during - after} bytes after {released} bytes of small "
        f"tensors were released ({len(alive)} still alive between them): it counts memory kept "
        "for reuse, not live tensors"
    )
    del alive


@pytest.mark.contract("platform.runtime.mem_get_info")
def test_mem_get_info_is_consistent(platform):
    """Reads ``mem_get_info`` and ``get_device_total_memory`` for device 0 while a
    64 MiB tensor lives on it and compares them: bounds on free, the two totals equal
    and positive, and the total at least the tensor's size (bytes, not kB or MiB)."""
    index = 0
    probe = torch.ones(_PROBE_BYTES // 4, dtype=torch.float32, device=platform.torch_device(index))
    free, total = platform.mem_get_info(index)
    assert 0 <= free <= total, f"free={free} total={total}"
    assert total == platform.get_device_total_memory(index) > 0
    assert total >= probe.nbytes, (
        f"total memory {total} is less than the {probe.nbytes}-byte tensor the device holds: not bytes")


@pytest.mark.contract("platform.runtime.seeding")
def test_manual_seed_all_reproduces(platform, device):
    """For ``manual_seed_all`` and ``seed_everything`` in turn, compares 64 uniform
    draws on the device after seed 1234 and after 1234 again, after 0 (the engine's
    default seed, and falsy) and 0 again, and after 1234 and 4321, exactly."""
    def draw(seed, seeder):
        seeder(seed)
        return torch.rand(64, device=device).cpu()

    for seeder in (platform.manual_seed_all, platform.seed_everything):
        for seed in (1234, 0):
            assert torch.equal(draw(seed, seeder), draw(seed, seeder)), f"{seeder.__name__}({seed}) did not reproduce"
        assert not torch.equal(draw(1234, seeder), draw(4321, seeder)), f"{seeder.__name__} ignores the seed"


@pytest.mark.contract("platform.runtime.pin_memory")
def test_pin_memory_claim_is_honest(platform):
    """``not_supported`` when ``is_pin_memory_available()`` is False; otherwise pins a
    1024-element host tensor and checks ``is_pinned()``."""
    if not platform.is_pin_memory_available():
        not_supported("the platform reports pinned memory as unavailable")
    pinned = torch.arange(1024, dtype=torch.float32).pin_memory()
    assert pinned.is_pinned()


@pytest.mark.contract("platform.runtime.stream")
def test_stream_is_created(platform):
    """Creates ``platform.Stream()``, checks it is not None, and enters
    ``torch.<device_type>.stream(stream)`` when torch has such a function."""
    stream = platform.Stream()
    assert stream is not None
    runtime = getattr(torch, platform.device_type, None)
    stream_context = getattr(runtime, "stream", None)
    if callable(stream_context):
        with stream_context(stream):
            pass
