"""Benchmark: a platform's attention backend beside torch's SDPA, and beside memory bandwidth.

Decode: 16 sequences of context 2048, 8 query / 2 KV heads, head size 128, block size
16, blocks shuffled through the cache. Prefill: one causal request of 1024 tokens.
SDPA (``torch.nn.functional.scaled_dot_product_attention``) gets the same shapes
with dense, contiguous keys and values (no paging), as its best case. The physical
limit is the memory-read bandwidth of a large ``tensor.sum()`` on the same device,
measured in the same run; decode is memory-bound, so its KV-read bandwidth is quoted
as a share of it.

    python bench/attention.py [--repeats 15] [--threads N]
    python bench/attention.py --platform cuda --decode-seqs 128 --context 8192

``--platform`` benchmarks the backend that platform selects (``cpu``: the C/torch
CPU backend; ``cuda``: the Triton backend) on its device. On ``cpu`` the backend is
timed on the C kernel of each ``--variants`` (default: every variant this host
executes, whether or not the backend routes to it here) and on its torch path. On a GPU the default decode
problem (67 MB of fp32 KV) is read in microseconds, so pass a larger one.

The box may be shared and noisy: figures are medians over repeats; rerun if they
look disturbed.
"""

from __future__ import annotations

import argparse
import contextlib
import os

import torch
import torch.nn.functional as F
from tabulate import tabulate

from conformance.performance.attention import (
    DECODE_CONTEXT,
    DECODE_SEQS,
    HEAD_SIZE,
    NUM_HEADS,
    NUM_KV_HEADS,
    PREFILL_TOKENS,
    attention_backend,
    backend_step,
    decode_kv_bytes,
    decode_seconds,
    median_seconds,
    paged_problem,
)
from conformance.reference_engine.attention import cpu_attn
from conformance.reference_engine.kernels.cpu import native, ops
from conformance.reference_engine.platforms import resolve_platform

#: The cpu backend's torch path, in --variants.
TORCH_PATH = "torch"


@contextlib.contextmanager
def cpu_kernels(variant: str):
    """The cpu backend on the C kernel of ``variant`` (plain prefills included), routed
    there or not, or on its torch path (``TORCH_PATH``)."""
    saved_env, saved_routes = dict(os.environ), (cpu_attn.NATIVE_ATTENTION_VARIANTS, cpu_attn.prefills_in_kernel)
    if variant == TORCH_PATH:
        os.environ[native.ENV_SWITCH] = "0"
    else:
        os.environ[native.ENV_VARIANT] = variant
        cpu_attn.NATIVE_ATTENTION_VARIANTS = frozenset({variant})
        cpu_attn.prefills_in_kernel = lambda: True
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        cpu_attn.NATIVE_ATTENTION_VARIANTS, cpu_attn.prefills_in_kernel = saved_routes


def memory_read_bandwidth(device, repeats: int, synchronize) -> float:
    """Bytes per second of summing 512 MiB (far beyond any cache)."""
    data = torch.ones(128 * 2**20, dtype=torch.float32, device=device)
    return data.numel() * data.element_size() / median_seconds(data.sum, repeats, synchronize)


def sdpa_step(device, num_seqs: int, query_len: int, kv_len: int, dtype: torch.dtype, causal: bool):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(num_seqs, heads, length, HEAD_SIZE, generator=gen).to(device, dtype)
               for heads, length in ((NUM_HEADS, query_len), (NUM_KV_HEADS, kv_len), (NUM_KV_HEADS, kv_len)))
    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--platform", default="cpu", help="platform whose attention backend is timed")
    parser.add_argument("--decode-seqs", type=int, default=DECODE_SEQS)
    parser.add_argument("--context", type=int, default=DECODE_CONTEXT, help="decode context length")
    parser.add_argument("--variants", nargs="+", help="cpu: C kernel variants to time, and/or 'torch' "
                        "(default: every variant this host executes, then torch)")
    parser.add_argument("--prefill-tokens", type=int, default=PREFILL_TOKENS)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    platform = resolve_platform(args.platform)
    on_cpu = platform.device_type == "cpu"
    variants = (args.variants or [v.name for v in native.host_variants()] + [TORCH_PATH]) if on_cpu else [None]
    with torch.inference_mode():
        device, sync = platform.torch_device(), platform.synchronize
        bandwidth = memory_read_bandwidth(device, args.repeats, sync)
        rows = []
        for dtype in (torch.float32, torch.bfloat16):
            name = str(dtype).removeprefix("torch.")
            backend = attention_backend(platform, dtype)
            seq_len = args.context + 1
            kv_bytes = decode_kv_bytes(args.decode_seqs, args.context, dtype)
            prefill = paged_problem(backend, device, 1, 0, args.prefill_tokens, dtype)
            sdpa_decode = median_seconds(sdpa_step(device, args.decode_seqs, 1, seq_len, dtype, causal=False),
                                         args.repeats, sync)
            sdpa_prefill = median_seconds(sdpa_step(device, 1, args.prefill_tokens, args.prefill_tokens, dtype,
                                                    causal=True), args.repeats, sync)
            decodes, prefills = [], []
            for variant in variants:
                with cpu_kernels(variant) if variant else contextlib.nullcontext():
                    label = f"{backend.get_name()} (paged{', ' + variant if variant else ''})"
                    decodes.append((label, decode_seconds(platform, backend, dtype, args.decode_seqs, args.context,
                                                          args.repeats)))
                    prefills.append((label, median_seconds(backend_step(backend, prefill), args.repeats, sync)))
            for impl, seconds in (*decodes, ("sdpa (dense)", sdpa_decode)):
                rows.append([f"decode {name}", impl, seconds * 1e3, kv_bytes / seconds / 1e9,
                             100 * kv_bytes / seconds / bandwidth, sdpa_decode / seconds])
            for impl, seconds in (*prefills, ("sdpa (dense)", sdpa_prefill)):
                rows.append([f"prefill {name}", impl, seconds * 1e3, None, None, sdpa_prefill / seconds])
    if on_cpu:
        routed = native.describe() in cpu_attn.NATIVE_ATTENTION_VARIANTS
        print(f"C kernels by default: {native.describe()} (the backend routes decode and chunked prefill to "
              f"{'C' if routed else 'torch'}, plain prefill to {'C' if routed and cpu_attn.prefills_in_kernel() else 'SDPA'}"
              f"); CPU flags: {' '.join(native.isa_flags())}; {ops.describe_torch()}")
    print(f"device: {platform.get_device_name()}; decode {args.decode_seqs} x {args.context}, "
          f"prefill {args.prefill_tokens}; memory-read bandwidth (sum of 512 MiB, median): "
          f"{bandwidth / 1e9:.1f} GB/s; torch threads: {torch.get_num_threads()}; repeats: {args.repeats}")
    print(tabulate(rows, headers=["case", "implementation", "median ms", "KV read GB/s", "% of bandwidth",
                                  "speed vs sdpa"], floatfmt=".2f", missingval="-"))


if __name__ == "__main__":
    main()
