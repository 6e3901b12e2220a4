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

import torch
from tabulate import tabulate

from conformance.performance.communicator import OPS, slowest_rank
from conformance.reference_engine.platforms import resolve_platform
from conformance.suites.ranks import RankPool


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
            for size, kit, raw, bus_factor in slowest_rank(pool, platform, op, sizes, getattr(torch, args.dtype),
                                                           args.iterations):
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
