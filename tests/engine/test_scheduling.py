"""Scheduling changes nothing: the same greedy tokens however requests are batched."""

from __future__ import annotations

import pytest

from conformance.reference_engine import SamplingParams

GREEDY = SamplingParams(temperature=0, max_tokens=40, ignore_eos=True)
PROMPTS = [
    {"prompt_token_ids": [1] + [(13 * i + 7 * n) % 4000 + 3 for i in range(n)]}
    for n in (5, 40, 97, 130)
]


def tokens(outputs) -> list[list[int]]:
    return [o.outputs[0].token_ids for o in outputs]


@pytest.fixture(scope="module")
def alone(tiny_llm) -> list[list[int]]:
    """Each prompt generated on its own, in an engine with room for everything."""
    return [tokens(tiny_llm.generate(p, GREEDY))[0] for p in PROMPTS]


def test_batched_equals_alone(tiny_llm, alone):
    """Rule: a batch gives every prompt the tokens it gets alone, in input order."""
    assert tokens(tiny_llm.generate(PROMPTS, GREEDY)) == alone


def test_chunked_prefill_equals_alone(make_llm, alone):
    """Rule: prompts longer than the step's token budget (chunked over several steps,
    mixed with other requests' decodes) give the same tokens."""
    llm = make_llm(max_num_batched_tokens=32)
    assert tokens(llm.generate(PROMPTS, GREEDY)) == alone


def test_preemption_equals_alone(make_llm, alone):
    """Rule: with a KV cache too small for the batch, requests are preempted and
    recomputed, and still give the same tokens."""
    llm = make_llm(num_kv_blocks=16)  # 256 tokens: one max_model_len sequence
    assert tokens(llm.generate(PROMPTS, GREEDY)) == alone
    assert llm.llm_engine.scheduler.num_preemptions > 0


def test_max_num_seqs_equals_alone(make_llm, alone):
    """Rule: admitting one request at a time (max_num_seqs=1) gives the same tokens."""
    llm = make_llm(max_num_seqs=1)
    assert tokens(llm.generate(PROMPTS, GREEDY)) == alone


def test_multiprocess_executor_equals_in_process(make_llm, alone):
    """Rule: the one-process-per-rank executor (spawned, world size 1) computes what
    the in-process one does."""
    llm = make_llm(distributed_executor_backend="mp")
    assert tokens(llm.generate(PROMPTS, GREEDY)) == alone


def test_tensor_parallel_equals_single_rank(make_llm, alone):
    """Rule: two tensor-parallel ranks (spawned processes, the platform's
    communicator joining the split layers) give the tokens one rank gives."""
    llm = make_llm(tensor_parallel_size=2)
    assert tokens(llm.generate(PROMPTS[:2], GREEDY)) == alone[:2]
