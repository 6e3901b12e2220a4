"""The ``cpu`` platform: the reference every other platform is compared with.

Host memory is the device memory here: ``memory_allocated`` reports the process's
resident set and ``mem_get_info`` the machine's available memory (Linux ``/proc``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import platform as host_platform
import time

import torch

from conformance.contract.attention import AttentionSelectorConfig
from conformance.contract.capabilities import (
    DeviceCapability,
    PlatformCapabilities,
)
from conformance.contract.platform import Platform

_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None on other C libraries."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    return getattr(libc, "malloc_trim", None)


class HostEvent:
    """A device event for a synchronous device: recording it is completing it."""

    def __init__(self, enable_timing: bool = False) -> None:
        self.enable_timing = enable_timing
        self._recorded_at: float | None = None

    def record(self, stream=None) -> None:
        self._recorded_at = time.perf_counter()

    def query(self) -> bool:
        return self._recorded_at is not None

    def synchronize(self) -> None:
        """Nothing to wait for: CPU kernels have finished when they return."""

    def elapsed_time(self, end_event: HostEvent) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("both events must be created with enable_timing=True")
        if self._recorded_at is None or end_event._recorded_at is None:
            raise RuntimeError("both events must be recorded before elapsed_time")
        return (end_event._recorded_at - self._recorded_at) * 1000.0


def _meminfo_bytes(field: str) -> int:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            name, _, value = line.partition(":")
            if name == field:
                return int(value.split()[0]) * 1024
    raise RuntimeError(f"/proc/meminfo has no {field} line")


class CpuPlatform(Platform):
    device_name = "cpu"
    device_type = "cpu"
    dispatch_key = "CPU"
    dist_backend = "gloo"
    custom_ops_module = "conformance.reference_engine.kernels.cpu.ops"
    capabilities = PlatformCapabilities(
        dtypes=(torch.float32, torch.bfloat16, torch.float16),
        head_sizes=(32, 64, 128, 256),
        block_sizes=(16, 32, 64, 128),
        kv_cache_dtypes=("auto",),
        max_world_size=4,
        features=frozenset({"tensor_parallel", "sliding_window", "logits_soft_cap"}),
    )

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        device = torch.device(device)
        if device.type != "cpu" or device.index not in (None, 0):
            raise ValueError(f"cpu platform has one device, cpu:0; got {device}")

    @classmethod
    def current_device(cls) -> int:
        return 0

    @classmethod
    @functools.cache
    def get_device_name(cls, device_id: int = 0) -> str:
        try:
            with open("/proc/cpuinfo") as cpuinfo:
                for line in cpuinfo:
                    if line.startswith("model name"):
                        return line.partition(":")[2].strip()
        except OSError:
            pass
        return host_platform.processor() or host_platform.machine()

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        return None

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return _meminfo_bytes("MemTotal")

    @classmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        return _meminfo_bytes("MemAvailable"), _meminfo_bytes("MemTotal")

    @classmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        # glibc keeps freed memory resident for reuse (its trim threshold grows with
        # the largest free seen), which would hide both allocations and releases;
        # giving it back first leaves the resident set to live memory.
        trim = _malloc_trim()
        if trim is not None:
            trim(0)
        with open("/proc/self/statm") as statm:
            resident_pages = int(statm.read().split()[1])
        return resident_pages * _PAGE_SIZE

    @classmethod
    def synchronize(cls, device_id: int | None = None) -> None:
        """CPU kernels (and their intra-op threads) have finished when they return."""

    @classmethod
    def Event(cls, enable_timing: bool = False) -> HostEvent:
        return HostEvent(enable_timing)

    @classmethod
    def Stream(cls):
        return torch.cpu.Stream()

    @classmethod
    def empty_cache(cls) -> None:
        """torch's CPU allocator keeps no cache: freed memory is already returned."""

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        torch.manual_seed(seed)

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        # Pinning speeds host-to-device copies; here host and device are one.
        return False

    @classmethod
    def get_attn_backend_cls(cls, config: AttentionSelectorConfig) -> str:
        cls.refuse_undeclared_attention(config)
        return "conformance.reference_engine.attention.cpu_attn.CpuAttentionBackend"

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return "conformance.reference_engine.distributed.torch_communicator.TorchDistributedCommunicator"
