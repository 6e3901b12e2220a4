"""Benchmark: the CPU attention backend beside torch's SDPA, and beside memory bandwidth.

Decode: 16 sequences of context 2048, 8 query / 2 KV heads, head size 128, block size
16, blocks shuffled through the cache. Prefill: one causal request of 1024 tokens.
SDPA (``torch.nn.functional.scaled_dot_product_attention``) gets the same shapes
with dense, contiguous keys and values (no paging), as its best case. The physical
limit is the memory-read bandwidth of a large ``tensor.sum()`` measured in the same
run; decode is memory-bound, so its KV-read bandwidth is quoted as a share of it.

    python bench/attention.py [--repeats 15] [--threads N]

The box may be shared and noisy: figures are medians over repeats; rerun if they
look disturbed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from tabulate import tabulate

from conformance.reference_engine.attention.backend import AttentionMetadata
from conformance.reference_engine.attention.cpu_attn import CpuAttentionBackend, CpuAttentionImpl

NUM_HEADS, NUM_KV_HEADS, HEAD_SIZE, BLOCK_SIZE = 8, 2, 128, 16
DECODE_SEQS, DECODE_CONTEXT, PREFILL_TOKENS = 16, 2048, 1024


def median_seconds(fn, repeats: int) -> float:
    fn()  # warm-up: allocations, thread pool, oneDNN primitives
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def memory_read_bandwidth(repeats: int) -> float:
    """Bytes per second of summing 512 MiB (far beyond any cache)."""
    data = torch.ones(128 * 2**20, dtype=torch.float32)
    return data.numel() * data.element_size() / median_seconds(data.sum, repeats)


def paged_problem(num_seqs: int, context: int, query_len: int, dtype: torch.dtype):
    """Query, key, value of the new tokens, a cache holding each sequence's context
    in shuffled blocks, and the metadata of the step."""
    gen = torch.Generator().manual_seed(0)
    blocks_per_seq = -(-(context + query_len) // BLOCK_SIZE)
    num_blocks = num_seqs * blocks_per_seq
    cache_shape = CpuAttentionBackend.get_kv_cache_shape(num_blocks, BLOCK_SIZE, NUM_KV_HEADS, HEAD_SIZE)
    kv_cache = torch.randn(cache_shape, generator=gen).to(dtype)
    block_table = torch.randperm(num_blocks, generator=gen).view(num_seqs, blocks_per_seq).int()
    positions = torch.arange(context, context + query_len)
    slots = (block_table[:, positions // BLOCK_SIZE].long() * BLOCK_SIZE + positions % BLOCK_SIZE).flatten()
    tokens = num_seqs * query_len
    query = torch.randn(tokens, NUM_HEADS, HEAD_SIZE, generator=gen).to(dtype)
    key = torch.randn(tokens, NUM_KV_HEADS, HEAD_SIZE, generator=gen).to(dtype)
    value = torch.randn(tokens, NUM_KV_HEADS, HEAD_SIZE, generator=gen).to(dtype)
    metadata = AttentionMetadata(
        query_start_loc=torch.arange(0, tokens + 1, query_len, dtype=torch.int32),
        seq_lens=torch.full((num_seqs,), context + query_len, dtype=torch.int32),
        block_table=block_table, slot_mapping=slots, max_query_len=query_len,
        max_seq_len=context + query_len, num_actual_tokens=tokens,
    )
    return query, key, value, kv_cache, metadata


def backend_step(problem):
    query, key, value, kv_cache, metadata = problem
    impl = CpuAttentionImpl(NUM_HEADS, HEAD_SIZE, HEAD_SIZE**-0.5, NUM_KV_HEADS)
    output = torch.empty_like(query)
    return lambda: impl.forward(query, key, value, kv_cache, metadata, output)


def sdpa_step(num_seqs: int, query_len: int, kv_len: int, dtype: torch.dtype, causal: bool):
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(num_seqs, NUM_HEADS, query_len, HEAD_SIZE, generator=gen).to(dtype)
    k = torch.randn(num_seqs, NUM_KV_HEADS, kv_len, HEAD_SIZE, generator=gen).to(dtype)
    v = torch.randn(num_seqs, NUM_KV_HEADS, kv_len, HEAD_SIZE, generator=gen).to(dtype)
    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    bandwidth = memory_read_bandwidth(args.repeats)
    rows = []
    with torch.inference_mode():
        for dtype in (torch.float32, torch.bfloat16):
            name = str(dtype).removeprefix("torch.")
            seq_len = DECODE_CONTEXT + 1
            kv_bytes = 2 * DECODE_SEQS * seq_len * NUM_KV_HEADS * HEAD_SIZE * dtype.itemsize
            ours = median_seconds(backend_step(paged_problem(DECODE_SEQS, DECODE_CONTEXT, 1, dtype)), args.repeats)
            sdpa = median_seconds(sdpa_step(DECODE_SEQS, 1, seq_len, dtype, causal=False), args.repeats)
            for impl, seconds in (("cpu backend (paged)", ours), ("sdpa (dense)", sdpa)):
                rows.append([f"decode {name}", impl, seconds * 1e3, kv_bytes / seconds / 1e9,
                             100 * kv_bytes / seconds / bandwidth, sdpa / seconds])
            ours = median_seconds(backend_step(paged_problem(1, 0, PREFILL_TOKENS, dtype)), args.repeats)
            sdpa = median_seconds(sdpa_step(1, PREFILL_TOKENS, PREFILL_TOKENS, dtype, causal=True), args.repeats)
            for impl, seconds in (("cpu backend (paged)", ours), ("sdpa (dense)", sdpa)):
                rows.append([f"prefill {name}", impl, seconds * 1e3, None, None, sdpa / seconds])
    print(f"memory-read bandwidth (sum of 512 MiB, median): {bandwidth / 1e9:.1f} GB/s; "
          f"torch threads: {torch.get_num_threads()}; repeats: {args.repeats}")
    print(tabulate(rows, headers=["case", "implementation", "median ms", "KV read GB/s", "% of bandwidth",
                                  "speed vs sdpa"], floatfmt=".2f", missingval="-"))


if __name__ == "__main__":
    main()
