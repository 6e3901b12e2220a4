"""Collective bandwidth of a platform's communicator, nccl-tests style.

``measure`` runs on every rank of a ``RankPool`` and times the communicator's call
beside the raw ``torch.distributed`` call on the same inputs, interleaved. Bus
bandwidth applies nccl-tests' bus factors (2(n-1)/n for all_reduce, (n-1)/n for
all_gather and reduce_scatter, 1 for broadcast) and assumes a flat topology, as
nccl-tests' does. Times are the slowest rank's (each iteration starts after a barrier).
"""

from __future__ import annotations

import statistics
import time
from typing import NamedTuple

import torch
import torch.distributed as dist

from conformance.contract.platform import Platform
from conformance.suites.ranks import RankPool

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
_all_gather_flat = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_reduce_scatter_flat = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


class Timing(NamedTuple):
    """One size of one collective: bytes, median seconds of the communicator and of
    raw torch.distributed, and the bus factor."""

    size: int
    kit: float
    raw: float
    bus_factor: float

    def busbw(self) -> float:
        """The communicator's bus bandwidth, in bytes/s."""
        return self.size / self.kit * self.bus_factor


def _operations(comm, op: str, numel: int, dtype: torch.dtype):
    """The communicator's call and the raw torch.distributed call for ``op`` on
    ``numel`` elements (the total, as nccl-tests counts size), and the bus factor."""
    n, device = comm.world_size, comm.device
    if op == "all_reduce":
        buffer = torch.ones(numel, dtype=dtype, device=device)
        return (lambda: comm.all_reduce(buffer), lambda: dist.all_reduce(buffer),
                2 * (n - 1) / n)
    # The raw calls allocate their outputs on every call, as the communicator does:
    # a caller that keeps each result (the contract's case) cannot reuse a buffer.
    if op == "all_gather":
        part = torch.ones(numel // n, dtype=dtype, device=device)
        return (lambda: comm.all_gather(part, 0),
                lambda: _all_gather_flat(part.new_empty(part.numel() * n), part),
                (n - 1) / n)
    if op == "reduce_scatter":
        whole = torch.ones(numel - numel % n, dtype=dtype, device=device)
        return (lambda: comm.reduce_scatter(whole, 0),
                lambda: _reduce_scatter_flat(whole.new_empty(whole.numel() // n), whole),
                (n - 1) / n)
    buffer = torch.ones(numel, dtype=dtype, device=device)
    return lambda: comm.broadcast(buffer, 0), lambda: dist.broadcast(buffer, 0), 1.0


def _time(call, iterations: int, synchronize) -> list[float]:
    times = []
    for _ in range(iterations):
        dist.barrier()
        start = time.perf_counter()
        call()
        synchronize()
        times.append(time.perf_counter() - start)
    return times


def measure(comm, platform: type[Platform], op: str, sizes_bytes: list[int], dtype: torch.dtype,
            iterations: int) -> list[Timing]:
    """Runs on every rank: per size, the median seconds of the communicator and of
    raw torch.distributed, interleaved so drift hits both alike."""
    synchronize = platform.synchronize
    rows = []
    for size in sizes_bytes:
        numel = max(comm.world_size, size // dtype.itemsize)
        kit_call, raw_call, bus_factor = _operations(comm, op, numel, dtype)
        for call in (kit_call, raw_call):  # warm-up
            _time(call, 2, synchronize)
        kit, raw = [], []
        for _ in range(iterations):
            kit += _time(kit_call, 1, synchronize)
            raw += _time(raw_call, 1, synchronize)
        rows.append(Timing(numel * dtype.itemsize, statistics.median(kit), statistics.median(raw),
                           bus_factor))
    return rows


def slowest_rank(pool: RankPool, platform: type[Platform], op: str, sizes_bytes: list[int],
                 dtype: torch.dtype, iterations: int) -> list[Timing]:
    """``measure`` on every rank of ``pool``; per size, the slowest rank's times."""
    per_rank = pool.run(measure, platform, op, sizes_bytes, dtype, iterations)
    return [Timing(size, max(rows[i].kit for rows in per_rank), max(rows[i].raw for rows in per_rank),
                   bus_factor)
            for i, (size, _, _, bus_factor) in enumerate(per_rank[0])]


def all_reduce_busbw(platform: type[Platform], world_size: int, size_bytes: int,
                     iterations: int = 20, timeout: float = 600) -> float:
    """The communicator's all_reduce bus bandwidth (bytes/s) at ``size_bytes``, float32,
    on ``world_size`` fresh rank processes."""
    pool = RankPool(platform, world_size, timeout=timeout)
    try:
        [timing] = slowest_rank(pool, platform, "all_reduce", [size_bytes], torch.float32, iterations)
    finally:
        pool.close()
    return timing.busbw()
