"""The oracle attention backend against dense causal attention written out by hand."""

from __future__ import annotations

import pytest
import torch

from conformance.contract.attention import AttentionMetadata, AttentionSelectorConfig
from conformance.reference_engine.attention.oracle import OracleAttentionBackend, OracleAttentionImpl

BLOCK = 4
HEADS, KV_HEADS, HEAD = 4, 2, 8


def dense_reference(q, k, v, window=None, cap=None):
    """One request, every position: float64 attention with an explicit double loop."""
    group = HEADS // KV_HEADS
    out = torch.zeros(q.shape, dtype=torch.float64)
    for t in range(q.shape[0]):
        for h in range(HEADS):
            keys = range(max(0, t - window + 1) if window else 0, t + 1)
            s = torch.stack([q[t, h].double() @ k[j, h // group].double() for j in keys]) * HEAD**-0.5
            if cap:
                s = cap * torch.tanh(s / cap)
            p = s.softmax(0)
            out[t, h] = sum(p[i] * v[j, h // group].double() for i, j in enumerate(keys))
    return out


def run_batch(impl, requests, num_blocks=32):
    """Feed ``requests`` as (q, k, v, context_len) in one mixed step, after writing each
    request's context through an earlier step; returns each request's new outputs."""
    cache = torch.full((2, num_blocks, BLOCK, KV_HEADS, HEAD), float("nan"))
    perm = torch.randperm(num_blocks, generator=torch.Generator().manual_seed(0)).tolist()
    tables, offset = [], 0
    for q, _, _, _ in requests:
        need = -(-q.shape[0] // BLOCK)
        tables.append(perm[offset : offset + need])
        offset += need
    width = max(map(len, tables))
    block_table = torch.tensor([t + [-1] * (width - len(t)) for t in tables], dtype=torch.int32)

    def step(spans):  # spans: per request, (start, end) positions to compute now
        lens = [e - s for s, e in spans]
        loc = torch.tensor([0] + lens).cumsum(0).int()
        rows = [(r, p) for r, (s, e) in enumerate(spans) for p in range(s, e)]
        slots = [tables[r][p // BLOCK] * BLOCK + p % BLOCK for r, p in rows] + [-1]  # one pad row
        def pick(x, rows=rows):
            return torch.stack([requests[r][x][p] for r, p in rows] + [requests[0][x][0]])

        q, k, v = pick(0), pick(1), pick(2)
        meta = AttentionMetadata(loc, torch.tensor([e for _, e in spans], dtype=torch.int32), block_table,
                                 torch.tensor(slots), max(lens), max(e for _, e in spans), len(rows))
        out = torch.empty_like(q)
        assert impl.forward(q, k, v, cache, meta, out) is out
        return out, loc

    step([(0, ctx) if ctx else (0, 1) for _, _, _, ctx in requests])  # fill the contexts
    out, loc = step([(ctx, q.shape[0]) for q, _, _, ctx in requests])
    assert torch.all(out[-1] == 0)  # the padding row
    return [out[loc[i] : loc[i + 1]] for i in range(len(requests))]


@pytest.mark.parametrize("window, cap", [(None, None), (5, None), (None, 20.0)])
def test_mixed_prefill_and_decode_match_dense(window, cap):
    """Rule: prefill, chunked prefill and decode requests in one batch, with GQA,
    scattered blocks, sliding window or soft cap, each match dense causal attention;
    NaN in unused cache slots never leaks in."""
    gen = torch.Generator().manual_seed(1)
    impl = OracleAttentionImpl(HEADS, HEAD, HEAD**-0.5, KV_HEADS, sliding_window=window,
                               logits_soft_cap=cap, compute_dtype=torch.float64)
    requests = []
    for length, context in [(9, 0), (13, 6), (7, 6)]:  # prefill, chunk, decode
        q = torch.randn(length, HEADS, HEAD, generator=gen) * 3
        k = torch.randn(length, KV_HEADS, HEAD, generator=gen) * 3
        v = torch.randn(length, KV_HEADS, HEAD, generator=gen)
        requests.append((q, k, v, context))
    for (q, k, v, context), got in zip(requests, run_batch(impl, requests)):
        expected = dense_reference(q, k, v, window, cap)[context:]
        torch.testing.assert_close(got.double(), expected, atol=1e-5, rtol=1e-5)


def test_float64_mode_is_more_exact_than_float32():
    """Rule: with compute_dtype=float64 the oracle is closer to exact arithmetic
    than the same inputs computed in float32."""
    gen = torch.Generator().manual_seed(2)
    req = [(torch.randn(12, HEADS, HEAD, generator=gen) * 8, torch.randn(12, KV_HEADS, HEAD, generator=gen) * 8,
            torch.randn(12, KV_HEADS, HEAD, generator=gen), 0)]
    exact = dense_reference(*req[0][:3])
    err = {}
    for dtype in (torch.float32, torch.float64):
        impl = OracleAttentionImpl(HEADS, HEAD, HEAD**-0.5, KV_HEADS, compute_dtype=dtype)
        got = run_batch(impl, req)[0]
        err[dtype] = (got.double() - exact).abs().max().item()
    assert err[torch.float64] < err[torch.float32]


def test_validate_configuration_gives_reasons():
    """Rule: supported configurations get no reasons; unsupported ones get one
    reason each, naming the value."""
    ok = AttentionSelectorConfig(head_size=64, dtype=torch.bfloat16, block_size=16, sliding_window=128,
                                 logits_soft_cap=30.0)
    assert OracleAttentionBackend.validate_configuration(ok) == []
    bad = AttentionSelectorConfig(head_size=64, dtype=torch.float64, block_size=16, kv_cache_dtype="fp8")
    reasons = OracleAttentionBackend.validate_configuration(bad)
    assert len(reasons) == 2 and "float64" in reasons[0] and "fp8" in reasons[1]
