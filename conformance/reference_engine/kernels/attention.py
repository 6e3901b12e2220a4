"""Paged attention in Triton: one kernel for prefill, chunked prefill and decode.

The shape of vLLM's unified Triton attention: each program takes a tile of one
request's new tokens for one KV head, with all the query heads that read that KV
head stacked as rows (``BLOCK_M = BLOCK_Q * GROUP``), reads the request's keys and
values a tile at a time through its block table and keeps an online softmax (running
max, running sum, rescaled accumulator) in float32. A decode is a tile of one token;
a prefill is many tiles. A decode batch too small to fill the GPU is split along the
context (split-K, as flash-decoding): each program reads one segment and the
segments' partial results are merged after. Keys past the causal limit, outside the
sliding window or past the context are masked, and masked values are loaded as zero
so NaN in unused slots cannot leak in.
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def _reshape_and_cache_kernel(key_ptr, value_ptr, cache_ptr, slot_ptr,
                              token_stride, cache_kv_stride, ROW: tl.constexpr, ROW_PAD: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slot_ptr + token)
    if slot < 0:  # padding token
        return
    offs = tl.arange(0, ROW_PAD)
    mask = offs < ROW
    key = tl.load(key_ptr + token * token_stride + offs, mask=mask)
    value = tl.load(value_ptr + token * token_stride + offs, mask=mask)
    element_ty = cache_ptr.dtype.element_ty
    tl.store(cache_ptr + slot * ROW + offs, key.to(element_ty), mask=mask)
    tl.store(cache_ptr + cache_kv_stride + slot * ROW + offs, value.to(element_ty), mask=mask)


def reshape_and_cache(key: torch.Tensor, value: torch.Tensor, kv_cache: torch.Tensor,
                      slot_mapping: torch.Tensor) -> None:
    """Write ``key``/``value`` ``[tokens, kv_heads, head_size]`` into ``kv_cache``
    (``(2, blocks, block_size, kv_heads, head_size)``, contiguous) at each token's
    slot; tokens with slot -1 are skipped."""
    num_tokens = slot_mapping.shape[0]
    if num_tokens == 0:
        return
    key, value = key[:num_tokens].contiguous(), value[:num_tokens].contiguous()
    row = key.shape[1] * key.shape[2]
    _reshape_and_cache_kernel[(num_tokens,)](
        key, value, kv_cache, slot_mapping, row, kv_cache.stride(0),
        ROW=row, ROW_PAD=triton.next_power_of_2(row),
    )


@triton.jit
def _unified_attention_kernel(
    q_ptr, cache_ptr, out_ptr, block_table_ptr, seq_lens_ptr, query_start_ptr, partial_ptr, stats_ptr,
    scale, soft_cap, window, num_heads, segment_tiles,
    q_token_stride, q_head_stride, cache_kv_stride, cache_block_stride, cache_pos_stride,
    cache_head_stride, block_table_stride,
    HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, BLOCK_SIZE: tl.constexpr, TILE: tl.constexpr,
    GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, BLOCK_Q: tl.constexpr, NUM_SEGMENTS: tl.constexpr,
    USE_WINDOW: tl.constexpr, USE_SOFT_CAP: tl.constexpr, FP32_DOT: tl.constexpr,
):
    req = tl.program_id(0)
    q_block = tl.program_id(1)
    kv_head = tl.program_id(2) // NUM_SEGMENTS
    segment = tl.program_id(2) % NUM_SEGMENTS
    q_start = tl.load(query_start_ptr + req)
    q_len = tl.load(query_start_ptr + req + 1) - q_start
    if q_block * BLOCK_Q >= q_len:
        return
    seq_len = tl.load(seq_lens_ptr + req)
    context_len = seq_len - q_len

    BLOCK_M: tl.constexpr = BLOCK_Q * GROUP_PAD
    rows = tl.arange(0, BLOCK_M)
    token_in_req = q_block * BLOCK_Q + rows // GROUP_PAD
    head = kv_head * GROUP + rows % GROUP_PAD
    row_valid = (token_in_req < q_len) & (rows % GROUP_PAD < GROUP)
    dims = tl.arange(0, HEAD_PAD)
    dim_valid = dims < HEAD
    q_offs = (q_start + token_in_req)[:, None] * q_token_stride + head[:, None] * q_head_stride + dims[None, :]
    q = tl.load(q_ptr + q_offs, mask=row_valid[:, None] & dim_valid[None, :], other=0.0)
    query_pos = context_len + token_in_req

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_PAD], tl.float32)

    # Keys are read TILE at a time whatever the block size: each key's block is looked
    # up on its own, so a tile may span blocks (small blocks) or part of one (large).
    last_pos = tl.minimum(seq_len, context_len + (q_block + 1) * BLOCK_Q)  # exclusive
    first_tile = 0
    if USE_WINDOW:
        first_tile = tl.maximum(context_len + q_block * BLOCK_Q - window + 1, 0) // TILE
    end_tile = tl.cdiv(last_pos, TILE)
    if NUM_SEGMENTS > 1:  # this program reads one segment of the context (split-K)
        first_tile = tl.maximum(first_tile, segment * segment_tiles)
        end_tile = tl.minimum(end_tile, (segment + 1) * segment_tiles)
    offs_key = tl.arange(0, TILE)
    head_base = cache_ptr + kv_head * cache_head_stride
    for tile in range(first_tile, end_tile):
        key_pos = tile * TILE + offs_key
        in_seq = key_pos < seq_len
        physical = tl.load(block_table_ptr + req * block_table_stride + key_pos // BLOCK_SIZE,
                           mask=in_seq, other=0).to(tl.int64)
        kv_offs = (physical * cache_block_stride + (key_pos % BLOCK_SIZE) * cache_pos_stride)[:, None] + dims[None, :]
        kv_mask = in_seq[:, None] & dim_valid[None, :]
        k = tl.load(head_base + kv_offs, mask=kv_mask, other=0.0)
        v = tl.load(head_base + cache_kv_stride + kv_offs, mask=kv_mask, other=0.0)
        if FP32_DOT:
            s = tl.dot(q.to(tl.float32), tl.trans(k.to(tl.float32)), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k.to(q.dtype)))
        s = s * scale
        if USE_SOFT_CAP:
            # tanh(x) = 2 sigmoid(2x) - 1, in ops every Triton version has.
            s = soft_cap * (2.0 * tl.sigmoid(2.0 * s / soft_cap) - 1.0)
        allowed = (key_pos[None, :] <= query_pos[:, None]) & in_seq[None, :]
        if USE_WINDOW:
            allowed = allowed & (query_pos[:, None] - key_pos[None, :] < window)
        s = tl.where(allowed, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new > float("-inf"), m_new, 0.0)  # rows with nothing allowed yet
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        if FP32_DOT:
            acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32), input_precision="ieee")
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out_mask = row_valid[:, None] & dim_valid[None, :]
    if NUM_SEGMENTS == 1:
        out_offs = (q_start + token_in_req)[:, None] * q_token_stride + head[:, None] * q_head_stride + dims[None, :]
        tl.store(out_ptr + out_offs, (acc / l_i[:, None]).to(out_ptr.dtype.element_ty), mask=out_mask)
    else:
        # Unnormalised partial sum, running max and sum of this segment; merged by
        # _merge_segments. An empty segment leaves max -inf, sum 0 and weight 0.
        idx = ((q_start + token_in_req) * num_heads + head) * NUM_SEGMENTS + segment
        tl.store(partial_ptr + idx[:, None] * HEAD_PAD + dims[None, :], acc, mask=out_mask)
        tl.store(stats_ptr + idx * 2, m_i, mask=row_valid)
        tl.store(stats_ptr + idx * 2 + 1, l_i, mask=row_valid)


def _interpreting() -> bool:
    # Triton's interpreter computes dots with numpy, which has no bf16 and sums fp16
    # products in fp16, so there every dot runs in fp32; on a GPU, half-precision dots
    # stay half (tensor cores, fp32 accumulation).
    return os.environ.get("TRITON_INTERPRET") == "1"


#: Decode batches with fewer (request, KV head) pairs than this are split along the
#: context, so that enough programs run to keep a large GPU's memory system busy.
SPLIT_BELOW_PROGRAMS = 512
#: Keys per segment at least: shorter segments cost more in merging than they save.
MIN_SEGMENT_KEYS = 256
MAX_SEGMENTS = 16


def _num_segments(num_reqs: int, num_kv_heads: int, max_query_len: int, max_seq_len: int) -> int:
    if max_query_len != 1 or num_reqs * num_kv_heads >= SPLIT_BELOW_PROGRAMS:
        return 1
    segments = 1  # a power of two: few distinct compiled variants
    while segments < MAX_SEGMENTS and max_seq_len >= 2 * segments * MIN_SEGMENT_KEYS:
        segments *= 2
    return segments


def _tile_config(max_query_len: int, head_pad: int, fp32: bool) -> tuple[int, int, int]:
    """(query rows per program, keys per step, warps), the fastest measured on an H200
    (head size 128): fp32 dots run without tensor cores and spill registers at large
    tiles. tl.dot wants at least 16 rows; a decode has one token per request, so more
    rows would be padding. Large heads halve the tiles to keep them in registers."""
    if max_query_len == 1:
        rows, keys = 16, (64 if fp32 else 128)
    else:
        rows, keys = (32, 32) if fp32 else (64, 64)
    if head_pad > 128:
        rows, keys = max(16, rows // 2), max(16, keys // 2)
    return rows, keys, 4


def _merge_segments(partial: torch.Tensor, stats: torch.Tensor, output: torch.Tensor, head_size: int) -> None:
    """``output`` from the segments' partial sums ``[tokens, heads, segments, D]`` and
    (max, sum) ``stats``: each segment rescaled to the overall max."""
    seg_max, seg_sum = stats.unbind(-1)
    weight = torch.exp(seg_max - seg_max.amax(dim=-1, keepdim=True))
    total = (seg_sum * weight).sum(dim=-1, keepdim=True)
    merged = (partial[..., :head_size] * weight[..., None]).sum(dim=-2) / total
    output.copy_(merged.to(output.dtype))


def unified_attention(query: torch.Tensor, kv_cache: torch.Tensor, output: torch.Tensor,
                      query_start_loc: torch.Tensor, seq_lens: torch.Tensor, block_table: torch.Tensor,
                      max_query_len: int, scale: float, sliding_window: int | None = None,
                      logits_soft_cap: float | None = None, max_seq_len: int | None = None,
                      num_segments: int | None = None) -> None:
    """Attention of every request's new tokens (``query`` ``[tokens, heads, D]``)
    over its paged context in ``kv_cache``, written into ``output`` (same shape and
    strides as ``query``). ``num_segments`` splits each decode's context into that
    many parts computed in parallel (None: chosen from the batch's shape)."""
    num_tokens, num_heads, head_size = query.shape
    num_kv_heads, block_size = kv_cache.shape[3], kv_cache.shape[2]
    num_reqs = seq_lens.shape[0]
    group = num_heads // num_kv_heads
    group_pad = triton.next_power_of_2(group)
    head_pad = triton.next_power_of_2(head_size)
    rows, tile, num_warps = _tile_config(max_query_len, head_pad, query.dtype == torch.float32)
    block_q = max(1, rows // group_pad)
    if max_seq_len is None:
        max_seq_len = int(seq_lens.max())
    if num_segments is None:
        num_segments = _num_segments(num_reqs, num_kv_heads, max_query_len, max_seq_len)
    segment_tiles = triton.cdiv(triton.cdiv(max_seq_len, num_segments), tile)
    query = query.contiguous()
    if num_segments > 1:
        partial = query.new_empty(num_tokens, num_heads, num_segments, head_pad, dtype=torch.float32)
        stats = query.new_empty(num_tokens, num_heads, num_segments, 2, dtype=torch.float32)
    else:
        partial = stats = output  # unused
    grid = (num_reqs, triton.cdiv(max_query_len, block_q), num_kv_heads * num_segments)
    _unified_attention_kernel[grid](
        query, kv_cache, output, block_table, seq_lens, query_start_loc, partial, stats,
        scale, logits_soft_cap or 0.0, sliding_window or 0, num_heads, segment_tiles,
        query.stride(0), query.stride(1), kv_cache.stride(0), kv_cache.stride(1), kv_cache.stride(2),
        kv_cache.stride(3), block_table.stride(0),
        HEAD=head_size, HEAD_PAD=head_pad, BLOCK_SIZE=block_size, TILE=tile,
        GROUP=group, GROUP_PAD=group_pad, BLOCK_Q=block_q, NUM_SEGMENTS=num_segments,
        USE_WINDOW=sliding_window is not None, USE_SOFT_CAP=logits_soft_cap is not None,
        FP32_DOT=query.dtype == torch.float32 or _interpreting(), num_warps=num_warps,
    )
    if num_segments > 1:
        _merge_segments(partial, stats, output, head_size)
