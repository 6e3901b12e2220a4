"""The Attention suite's batches are what their docstrings say: the fused-projection
layouts hand the same values in the advertised strides, and unslotted tails mark the
advertised tokens."""

from __future__ import annotations

import pytest
import torch

from conformance.reference_engine.attention.cpu_attn import CpuAttentionBackend
from conformance.suites.attention.strategies import FUSED_LAYOUTS, BatchSpec, FusedQkv, build_batch

GQA = BatchSpec(query_lens=(3, 1), context_lens=(0, 17), num_kv_heads=2, group=4, head_size=32,
                block_size=16, dtype=torch.float32, padding_tokens=2, seed=7)
MHA = BatchSpec(query_lens=(3, 1), context_lens=(0, 17), num_kv_heads=4, group=1, head_size=32,
                block_size=16, dtype=torch.float32, padding_tokens=2, seed=7)


@pytest.mark.parametrize("spec", [GQA, MHA], ids=["gqa", "mha"])
@pytest.mark.parametrize("layout", FUSED_LAYOUTS)
def test_each_layout_hands_the_same_values(spec, layout):
    plain = build_batch(spec, CpuAttentionBackend, torch.device("cpu"))
    fused = build_batch(spec, CpuAttentionBackend, torch.device("cpu"), fused_layout=layout)
    for name, got, want in zip("qkv", fused.inputs(), (plain.query, plain.key, plain.value)):
        assert torch.equal(got, want), f"{layout}: {name} differs"


def test_per_head_layout_leaves_heads_unpacked():
    """Key and value always; the query where each KV head has one query head."""
    for spec, query_packed in ((GQA, True), (MHA, False)):
        query, key, value = build_batch(spec, CpuAttentionBackend, torch.device("cpu"),
                                        fused_layout="per_head").inputs()
        unpacked = (spec.group + 2) * spec.head_size
        assert key.stride(1) == value.stride(1) == unpacked
        assert query.stride(1) == (spec.head_size if query_packed else unpacked)


def test_qk_normed_layout_gives_key_and_value_other_strides():
    _, key, value = build_batch(GQA, CpuAttentionBackend, torch.device("cpu"), fused_layout="qk_normed").inputs()
    assert key.is_contiguous() and not value.is_contiguous()


def test_an_unknown_layout_is_refused_by_name():
    with pytest.raises(ValueError, match="'interleaved' is not one of"):
        FusedQkv(torch.zeros(4), "interleaved")


@pytest.mark.parametrize("tail", [1, 2])
def test_unslotted_tail_marks_the_last_new_tokens_of_each_request(tail):
    spec = BatchSpec(query_lens=(4, 1, 2), context_lens=(0, 5, 3), num_kv_heads=1, group=1, head_size=32,
                     block_size=16, dtype=torch.float32, padding_tokens=1, seed=3, unslotted_tail=tail)
    slots = build_batch(spec, CpuAttentionBackend, torch.device("cpu")).metadata.slot_mapping.tolist()
    first, second, third, padding = slots[:4], slots[4:5], slots[5:7], slots[7:]
    assert first[4 - tail:] == [-1] * tail and -1 not in first[:4 - tail]
    assert second != [-1] and third[0] != -1 and third[1] == -1  # each request keeps its first
    assert padding == [-1]
