"""Plugins whose device runtime lies."""

import os

from kit_test_plugins import TestPlatform


class ConstantMemoryPlatform(TestPlatform):
    @classmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        return 1 << 30


class ReservedMemoryPlatform(TestPlatform):
    """Reports what its allocator holds, as a caching allocator's ``memory_reserved``
    does: the process's resident memory, freed heap memory kept for reuse included."""

    @classmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class OverstatedFreeMemoryPlatform(TestPlatform):
    @classmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        free, total = super().mem_get_info(device_id)
        return total + 1, total


class KilobyteMemoryInfoPlatform(TestPlatform):
    """Reports memory in kB, as ``/proc/meminfo`` and many vendor runtimes count it."""

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return super().get_device_total_memory(device_id) // 1024

    @classmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        free, total = super().mem_get_info(device_id)
        return free // 1024, total // 1024


class _SecondsEvent:
    """Times in seconds, as ``time.perf_counter`` does: ordered and non-negative."""

    def __init__(self, event) -> None:
        self._event = event

    def __getattr__(self, name):
        return getattr(self._event, name)

    def elapsed_time(self, end_event) -> float:
        return self._event.elapsed_time(end_event._event) / 1000


class SecondsEventPlatform(TestPlatform):
    @classmethod
    def Event(cls, enable_timing: bool = False):
        return _SecondsEvent(super().Event(enable_timing))


class UnseededPlatform(TestPlatform):
    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        """Forgets to seed."""

    @classmethod
    def seed_everything(cls, seed: int) -> None:
        """Forgets to seed."""


class ZeroSeedIgnoredPlatform(TestPlatform):
    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        """Seeds only when given a seed, by truth value: 0, the engine's default, is
        taken for none."""
        if seed:
            super().manual_seed_all(seed)


class _NeverCompletingEvent:
    def __init__(self, enable_timing: bool = False) -> None:
        self.enable_timing = enable_timing

    def record(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return False

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event) -> float:
        return 0.0


class StuckEventPlatform(TestPlatform):
    @classmethod
    def Event(cls, enable_timing: bool = False):
        return _NeverCompletingEvent(enable_timing)


class DishonestPinMemoryPlatform(TestPlatform):
    @classmethod
    def is_pin_memory_available(cls) -> bool:
        return True


class StuckCurrentDevicePlatform(TestPlatform):
    @classmethod
    def device_count(cls) -> int:
        return 2

    @classmethod
    def set_device(cls, device) -> None:
        """Ignores the request."""


class HangingSynchronizePlatform(TestPlatform):
    """Hangs in ``synchronize`` (a wedged device queue): for runs that get killed."""

    @classmethod
    def synchronize(cls, device_id=None) -> None:
        import time

        time.sleep(3600)


class CrashingStreamPlatform(TestPlatform):
    """Segfaults when asked for a stream (a driver bug): one test must crash, alone."""

    @classmethod
    def Stream(cls):
        import ctypes

        ctypes.string_at(0)  # reads address 0: SIGSEGV


class HangingPinMemoryPlatform(TestPlatform):
    """Never answers whether pinned memory exists: one test must time out, alone."""

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        import time

        time.sleep(3600)
        return False


class NoDevicesPlatform(TestPlatform):
    """Says it is available, with zero devices."""

    @classmethod
    def device_count(cls) -> int:
        return 0


class StrCurrentDevicePlatform(TestPlatform):
    """Answers ``current_device()`` with the index as a str, as a vendor's runtime
    binding may: only its own contract may fail, not every rule that needs a device."""

    @classmethod
    def current_device(cls) -> int:
        return str(super().current_device())
