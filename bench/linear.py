"""The cpu platform's C linear (``kernels/cpu/linear.c``) beside ``F.linear``, per kernel variant.

One "pass" is every projection of the ``small`` preset's 8 decoder layers (qkv
1024->1536, o 1024->1024, gate/up 1024->5632, down 2816->1024: 226 MB of bf16
weights, beyond any cache, as in a decode step) applied to M rows of x. The C
kernel of each variant this host executes and ``F.linear`` run the same pass in
alternation; the table gives medians, the weight-read rate and C's speed over
torch's, and marks the rows ``ops.linear`` routes to C here (``ops.max_rows``).

    python bench/linear.py [--variants avx2 portable] [--rows 1 4 16 32 64] [--repeats 7] [--threads N]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time

import torch
import torch.nn.functional as F
from tabulate import tabulate

from conformance.reference_engine.kernels.cpu import native, ops
from conformance.reference_engine.models.config import get_model_config
from conformance.reference_engine.platforms.cpu import CpuPlatform


def layer_weights(dtype: torch.dtype) -> list[torch.Tensor]:
    config = get_model_config("small")
    hidden, inner = config.hidden_size, config.intermediate_size
    head = hidden // config.num_attention_heads
    qkv = (config.num_attention_heads + 2 * config.num_key_value_heads) * head
    shapes = [(qkv, hidden), (hidden, hidden), (2 * inner, hidden), (hidden, inner)]
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(shape, generator=gen).to(dtype) for _ in range(config.num_hidden_layers)
            for shape in shapes]


def median_pass_seconds(linears, weights, rows: int, repeats: int) -> list[float]:
    """Median seconds of a pass by each of ``linears``, timed in alternation so a busy
    spell on the machine hits all of them alike; one warm-up pass each."""
    inputs = {w.shape[1]: torch.randn(rows, w.shape[1]).to(w.dtype) for w in weights}
    times: list[list[float]] = [[] for _ in linears]
    for repeat in range(repeats + 1):
        for linear, measured in zip(linears, times):
            start = time.perf_counter()
            for w in weights:
                linear(inputs[w.shape[1]], w)
            if repeat:
                measured.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=[v.name for v in native.host_variants()])
    parser.add_argument("--rows", nargs="+", type=int, default=[1, 4, 16, 32, 64])
    parser.add_argument("--dtypes", nargs="+", default=["bfloat16", "float16"])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, help="torch intra-op threads, the C kernel's too (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"device: {CpuPlatform.get_device_name()}; C kernels by default: {native.describe()}; "
          f"CPU flags: {' '.join(native.isa_flags())}; "
          f"{ops.describe_torch()}, "
          f"threads {torch.get_num_threads()}; median of {args.repeats}; "
          f"load average at start {os.getloadavg()[0]:.1f}")
    table = []
    with torch.inference_mode():
        for dtype_name in args.dtypes:
            weights = layer_weights(getattr(torch, dtype_name))
            gigabytes = sum(w.numel() * w.element_size() for w in weights) / 1e9
            for rows in args.rows:
                natives = [functools.partial(ops.native_linear, variant=v) for v in args.variants]
                torch_s, *seconds = median_pass_seconds([F.linear, *natives], weights, rows, args.repeats)
                for variant, ours in zip(args.variants, seconds):
                    routed = "C" if rows <= ops.max_rows(variant)[weights[0].dtype] else "torch"
                    table.append([dtype_name, rows, variant, ours * 1e3, gigabytes / ours,
                                  torch_s * 1e3, gigabytes / torch_s, torch_s / ours, routed])
    print(tabulate(table, headers=["dtype", "M", "variant", "C ms", "C GB/s", "torch ms", "torch GB/s",
                                   "C speed vs torch", "ops.linear"], floatfmt=".2f"))
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
