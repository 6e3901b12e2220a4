"""What ``torch.cpu`` lacks of the device runtime, for a device that lives in host
memory: per-allocation accounting, memory totals, a device name and timed events."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import platform
import time


class _MallInfo2(ctypes.Structure):
    # glibc's struct mallinfo2 (glibc >= 2.33): every field a size_t.
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


@functools.cache
def _mallinfo2():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    function = getattr(libc, "mallinfo2", None)
    if function is None:
        raise RuntimeError("acme_npu needs glibc >= 2.33 (mallinfo2) to account host memory")
    function.restype = _MallInfo2
    return function


def bytes_in_use() -> int:
    """Bytes malloc has handed out and not had back, over every arena: small blocks
    (``uordblks``) plus the large ones it maps directly (``hblkhd``), which is where a
    tensor of any size lives. Unlike the resident set, it falls the moment a tensor is
    freed, whatever malloc keeps cached for reuse."""
    info = _mallinfo2()()
    return info.uordblks + info.hblkhd


def _meminfo() -> dict[str, int]:
    fields = {}
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            key, value = line.split(":", 1)
            fields[key] = int(value.split()[0]) * 1024  # the kernel writes kB
    return fields


def total_and_available() -> tuple[int, int]:
    """The host's total memory and what it can still give without swapping."""
    fields = _meminfo()
    return fields["MemTotal"], fields["MemAvailable"]


def device_name() -> str:
    return f"Acme NPU emulator ({platform.machine()})"


class TimedEvent:
    """An event of a device whose kernels are synchronous: recorded means done, and
    the time of recording is the time the work before it finished."""

    def __init__(self, enable_timing: bool) -> None:
        self.enable_timing = enable_timing
        self.recorded_ns: int | None = None

    def record(self, stream=None) -> None:
        self.recorded_ns = time.monotonic_ns()

    def query(self) -> bool:
        return self.recorded_ns is not None

    def synchronize(self) -> None:
        """Nothing is in flight once a kernel returns."""

    def wait(self, stream=None) -> None:
        """Every stream is the host thread: nothing to wait for."""

    def elapsed_time(self, end_event: TimedEvent) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time needs two events made with enable_timing=True")
        if self.recorded_ns is None or end_event.recorded_ns is None:
            raise RuntimeError("elapsed_time needs two recorded events")
        return (end_event.recorded_ns - self.recorded_ns) / 1e6
