"""Collective bandwidth of a platform's communicator, nccl-tests style.

For all_reduce, all_gather, reduce_scatter and broadcast over a range of sizes it
prints time, algorithm bandwidth and bus bandwidth (nccl-tests' bus factors: 2(n-1)/n
for all_reduce, (n-1)/n for all_gather and reduce_scatter, 1 for broadcast) for the
platform's communicator beside raw ``torch.distributed`` calls on the same inputs,
measured interleaved in the same run, and the communicator's overhead over raw.

    python bench/communicator.py --platform cpu --world-size 2

Times are medians over iterations of the slowest rank (each iteration starts after a
barrier). Bus bandwidth assumes a flat topology, as nccl-tests' does.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.distributed as dist
from tabulate import tabulate

from conformance.reference_engine.platforms import resolve_platform
from conformance.suites.ranks import RankPool

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
_all_gather_flat = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_reduce_scatter_flat = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


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


def measure(comm, platform, op: str, sizes_bytes: list[int], dtype: torch.dtype, iterations: int):
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
        rows.append((numel * dtype.itemsize, statistics.median(kit), statistics.median(raw),
                     bus_factor))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", default="cpu")
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--sizes", default="8K,64K,512K,1M,4M,16M",
                        help="comma-separated sizes in bytes (K and M suffixes)")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--ops", default=",".join(OPS))
    args = parser.parse_args()

    units = {"K": 1 << 10, "M": 1 << 20}
    sizes = [int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s) for s in args.sizes.split(",")]
    platform = resolve_platform(args.platform)
    pool = RankPool(platform, args.world_size, timeout=600)
    table = []
    try:
        for op in args.ops.split(","):
            per_rank = pool.run(measure, platform, op, sizes, getattr(torch, args.dtype), args.iterations)
            for index, (size, _, _, bus_factor) in enumerate(per_rank[0]):
                kit = max(rows[index][1] for rows in per_rank)  # the slowest rank
                raw = max(rows[index][2] for rows in per_rank)
                table.append([
                    op, _human(size), f"{kit * 1e6:.0f}", f"{size / kit / 1e9:.2f}",
                    f"{size / kit / 1e9 * bus_factor:.2f}", f"{raw * 1e6:.0f}",
                    f"{size / raw / 1e9 * bus_factor:.2f}", f"{(kit / raw - 1) * 100:+.1f}%",
                ])
    finally:
        pool.close()
    print(f"platform {args.platform}, world size {args.world_size}, {args.dtype}, "
          f"median of {args.iterations} iterations (slowest rank)")
    print(tabulate(table, headers=["op", "size", "kit us", "kit algbw GB/s", "kit busbw GB/s",
                                   "raw us", "raw busbw GB/s", "kit overhead"],
                   colalign=("left", "right")))


def _human(size: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


if __name__ == "__main__":
    main()
