"""Platform suite, runtime: the device runtime the engine calls (RFC #9268's list)."""

from __future__ import annotations

import gc

import pytest
import torch

from conformance.suites.support import not_supported

#: Large enough to stand out of allocator and bookkeeping noise on any device.
_PROBE_BYTES = 64 * 1024 * 1024


def _busy_work(device: torch.device) -> torch.Tensor:
    """Queue enough work that an asynchronous device is still busy right after."""
    matrix = torch.randn(256, 256, device=device)
    for _ in range(4):
        matrix = torch.tanh(matrix @ matrix)
    return matrix


@pytest.mark.contract("platform.runtime.availability")
def test_available_with_devices(platform):
    """``is_available()`` is True on the machine under test, and then
    ``device_count()`` is at least 1."""
    assert platform.is_available() is True
    assert isinstance(platform.device_count(), int) and platform.device_count() >= 1


@pytest.mark.contract("platform.runtime.current_device")
def test_set_device_round_trip(platform):
    """After ``set_device(torch.device(type, i))``, ``current_device()`` returns i,
    for every visible device."""
    original = platform.current_device()
    try:
        for index in range(platform.device_count()):
            platform.set_device(torch.device(platform.device_type, index))
            assert platform.current_device() == index
    finally:
        platform.set_device(torch.device(platform.device_type, original))


@pytest.mark.contract("platform.runtime.synchronize")
def test_synchronize_completes_recorded_events(platform, device):
    """After ``synchronize()``, every event recorded before it has completed."""
    _busy_work(device)
    event = platform.Event()
    event.record()
    platform.synchronize()
    assert event.query() is True, "an event recorded before synchronize() is not complete"


@pytest.mark.contract("platform.runtime.events")
def test_event_timing_is_ordered(platform, device):
    """Timed events complete after ``synchronize()`` on them; elapsed times between
    events recorded in order are non-negative and ordered."""
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


@pytest.mark.contract("platform.runtime.memory")
def test_memory_allocated_follows_allocations(platform, device):
    """``memory_allocated()`` grows by at least a tensor's size while it lives and
    falls back by most of it once the tensor is released."""
    index = platform.current_device()
    gc.collect()
    platform.synchronize()
    before = platform.memory_allocated(index)
    probe = torch.ones(_PROBE_BYTES // 4, dtype=torch.float32, device=device)
    platform.synchronize()
    during = platform.memory_allocated(index)
    assert during - before >= _PROBE_BYTES, (
        f"memory_allocated grew by {during - before} bytes for a {_PROBE_BYTES}-byte tensor"
    )
    del probe
    gc.collect()
    platform.empty_cache()
    platform.synchronize()
    after = platform.memory_allocated(index)
    assert during - after >= _PROBE_BYTES // 2, (
        f"memory_allocated fell by only {during - after} bytes after release"
    )


@pytest.mark.contract("platform.runtime.mem_get_info")
def test_mem_get_info_is_consistent(platform):
    """``mem_get_info()`` is ``(free, total)`` with 0 <= free <= total, and total is
    ``get_device_total_memory()``, which is positive."""
    index = platform.current_device()
    free, total = platform.mem_get_info(index)
    assert 0 <= free <= total, f"free={free} total={total}"
    assert total == platform.get_device_total_memory(index) > 0


@pytest.mark.contract("platform.runtime.seeding")
def test_manual_seed_all_reproduces(platform, device):
    """The same seed given to ``manual_seed_all`` (and ``seed_everything``)
    reproduces the same random tensor on the device; another seed does not."""
    def draw(seed, seeder):
        seeder(seed)
        return torch.rand(64, device=device).cpu()

    for seeder in (platform.manual_seed_all, platform.seed_everything):
        first, again, other = draw(1234, seeder), draw(1234, seeder), draw(4321, seeder)
        assert torch.equal(first, again), f"{seeder.__name__}(1234) did not reproduce"
        assert not torch.equal(first, other), f"{seeder.__name__} ignores the seed"


@pytest.mark.contract("platform.runtime.pin_memory")
def test_pin_memory_claim_is_honest(platform):
    """When ``is_pin_memory_available()`` is True, pinning a host tensor works and
    the result is pinned."""
    if not platform.is_pin_memory_available():
        not_supported("the platform reports pinned memory as unavailable")
    pinned = torch.arange(1024, dtype=torch.float32).pin_memory()
    assert pinned.is_pinned()


@pytest.mark.contract("platform.runtime.stream")
def test_stream_is_created(platform):
    """``Stream()`` returns a new stream object usable as a context manager's
    argument to ``torch.<device_type>.stream`` where torch has one."""
    stream = platform.Stream()
    assert stream is not None
    runtime = getattr(torch, platform.device_type, None)
    stream_context = getattr(runtime, "stream", None)
    if callable(stream_context):
        with stream_context(stream):
            pass
