"""Decode attention: the rate a platform's attention backend reads the KV cache.

The problem is ``bench/attention.py``'s: ``num_seqs`` sequences of ``context`` tokens
each decoding one token, 8 query / 2 KV heads, head size 128, block size 16, blocks
shuffled through the cache. The time is of ``forward`` (cache write included); the
rate counts the keys and values the step must read, so a memory-bound backend is
judged against the device's memory bandwidth.
"""

from __future__ import annotations

import pkgutil
import statistics
import time
from collections.abc import Callable

import torch

from conformance.contract.attention import AttentionBackend, AttentionMetadata, AttentionSelectorConfig
from conformance.contract.platform import Platform

NUM_HEADS, NUM_KV_HEADS, HEAD_SIZE, BLOCK_SIZE = 8, 2, 128, 16
DECODE_SEQS, DECODE_CONTEXT, PREFILL_TOKENS = 16, 2048, 1024


def median_seconds(fn: Callable[[], object], repeats: int, synchronize: Callable[[], None]) -> float:
    fn()  # warm-up: allocations, thread pool, oneDNN primitives, kernel compilation
    synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def attention_backend(platform: type[Platform], dtype: torch.dtype) -> type[AttentionBackend]:
    """The backend ``platform`` selects for this module's shapes in ``dtype``."""
    return pkgutil.resolve_name(platform.get_attn_backend_cls(
        AttentionSelectorConfig(HEAD_SIZE, dtype, BLOCK_SIZE, "auto", None, None)))


def paged_problem(backend, device, num_seqs: int, context: int, query_len: int, dtype: torch.dtype):
    """Query, key, value of the new tokens, a cache holding each sequence's context
    in shuffled blocks, and the metadata of the step."""
    gen = torch.Generator().manual_seed(0)
    blocks_per_seq = -(-(context + query_len) // BLOCK_SIZE)
    num_blocks = num_seqs * blocks_per_seq
    cache_shape = backend.get_kv_cache_shape(num_blocks, BLOCK_SIZE, NUM_KV_HEADS, HEAD_SIZE)
    kv_cache = torch.randn(cache_shape, generator=gen).to(dtype)
    block_table = torch.randperm(num_blocks, generator=gen).view(num_seqs, blocks_per_seq).int()
    positions = torch.arange(context, context + query_len)
    slots = (block_table[:, positions // BLOCK_SIZE].long() * BLOCK_SIZE + positions % BLOCK_SIZE).flatten()
    tokens = num_seqs * query_len
    query = torch.randn(tokens, NUM_HEADS, HEAD_SIZE, generator=gen).to(dtype)
    key = torch.randn(tokens, NUM_KV_HEADS, HEAD_SIZE, generator=gen).to(dtype)
    value = torch.randn(tokens, NUM_KV_HEADS, HEAD_SIZE, generator=gen).to(dtype)
    metadata = AttentionMetadata(
        query_start_loc=torch.arange(0, tokens + 1, query_len, dtype=torch.int32).to(device),
        seq_lens=torch.full((num_seqs,), context + query_len, dtype=torch.int32).to(device),
        block_table=block_table.to(device), slot_mapping=slots.to(device), max_query_len=query_len,
        max_seq_len=context + query_len, num_actual_tokens=tokens,
    )
    return query.to(device), key.to(device), value.to(device), kv_cache.to(device), metadata


def backend_step(backend, problem) -> Callable[[], object]:
    query, key, value, kv_cache, metadata = problem
    impl = backend.get_impl_cls()(NUM_HEADS, HEAD_SIZE, HEAD_SIZE**-0.5, NUM_KV_HEADS)
    output = torch.empty_like(query)
    return lambda: impl.forward(query, key, value, kv_cache, metadata, output)


def decode_kv_bytes(num_seqs: int, context: int, dtype: torch.dtype) -> int:
    """Bytes of keys and values a decode step of one new token per sequence reads."""
    return 2 * num_seqs * (context + 1) * NUM_KV_HEADS * HEAD_SIZE * dtype.itemsize


def decode_seconds(platform: type[Platform], backend, dtype: torch.dtype, num_seqs: int, context: int,
                   repeats: int) -> float:
    """Median seconds of one decode step of ``backend`` on ``platform``'s device."""
    problem = paged_problem(backend, platform.torch_device(), num_seqs, context, 1, dtype)
    return median_seconds(backend_step(backend, problem), repeats, platform.synchronize)


def decode_kv_read_bytes_per_s(platform: type[Platform], dtype: torch.dtype, num_seqs: int = DECODE_SEQS,
                               context: int = DECODE_CONTEXT, repeats: int = 15) -> float:
    """The KV-read rate of the platform's own backend on the decode problem."""
    with torch.inference_mode():
        seconds = decode_seconds(platform, attention_backend(platform, dtype), dtype, num_seqs, context, repeats)
    return decode_kv_bytes(num_seqs, context, dtype) / seconds
