"""The Engine suite through the bridge: vLLM's own ``vllm.LLM`` on vLLM's ``cpu``
platform against the kit's reference engine, with the outcomes vLLM 0.32.0 gives,
asserted as they are (a vLLM that changes them shows here).

Needs vLLM (``pip install 'conformance[vllm]'``); deselected by default, run with
``python -m pytest -m requires_vllm tests/bridges`` (docs/vllm.md).
"""

from __future__ import annotations

import dataclasses

import pytest
from bridged_runs import run_bridged

from conformance.contract.discovery import load_platform
from conformance.reference_engine.llm import LLM
from conformance.suites.engine.generations import (
    FILTERED_PROMPTS,
    FILTERED_REQUESTS,
    LLM_SETTINGS,
    completions,
)
from conformance.suites.sampling import pick_problems

pytestmark = pytest.mark.requires_vllm

#: Every engine contract but sampling_params: vLLM computes what the reference does.
MATCHING = ("engine.generate.fp32_greedy", "engine.generate.half_logprobs_close",
            "engine.generate.block_sizes", "engine.generate.batch_invariance",
            "engine.parallel.tensor_parallel")


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> dict:
    record, run = run_bridged(tmp_path_factory.mktemp("engine"), "cpu", "--suite", "engine", "-q")
    assert record is not None, run.stdout[-3000:] + run.stderr[-3000:]
    return record


def _tests_of(record: dict, contract: str) -> list[dict]:
    tests = [t for t in record["tests"] if t["contract"] == contract]
    assert tests, f"{contract} did not run"
    return tests


@pytest.mark.parametrize("contract", MATCHING)
def test_vllm_generates_what_the_reference_does(record, contract):
    """fp32 greedy tokens identical, bf16/fp16 within their closeness rule, every block
    size vLLM's CPU backend declares (32, 64, 128), a request alone as in a batch, and
    tensor_parallel_size=2 (vLLM's mp executor, two gloo ranks) against one reference
    rank. A failure reads as the kit's report: prompt, position, both picks and their
    logprobs."""
    for test in _tests_of(record, contract):
        assert test["outcome"] == "passed", f"{test['nodeid']}: {test['message']}"


def test_vllm_refuses_the_kit_s_hot_filtered_requests(record):
    """vLLM 0.32's SamplingParams refuse a temperature above 2 (OpenAI's range); the
    kit's filtered requests run at 2 to 4, so the contract fails naming the request."""
    (test,) = _tests_of(record, "engine.generate.sampling_params")
    assert test["outcome"] == "failed"
    assert ("ValueError: prompt 0: vLLM refuses the kit's SamplingParams(temperature=3.0, top_k=3, "
            "seed=2001, max_tokens=6, ignore_eos=True, logprobs=5): temperature must be in [0, 2], "
            "got 3.0.") in test["message"]


def test_vllm_seeds_draw_vllm_s_stream(tmp_path):
    """Within vLLM's range (the filtered requests at temperature 2), vLLM keeps every
    filter and a seed reproduces its draws, but the draws are vLLM's random stream, not
    the reference sampler's: the contract's float32 rule (the reference's draws, token
    for token) cannot hold through the bridge even where vLLM accepts the requests."""
    from conformance.bridges.vllm.engine import VllmLLM

    requests = [dataclasses.replace(p, temperature=min(p.temperature, 2.0)) for p in FILTERED_REQUESTS]
    settings = dict(model="tiny", dtype="float32", block_size=32, **LLM_SETTINGS)
    vllm_engine = VllmLLM(platform=load_platform("vllm:cpu"), **settings)
    try:
        drawn, again = (completions(vllm_engine, FILTERED_PROMPTS, requests) for _ in range(2))
        with pytest.raises(ValueError, match=r"^prompt 0: the kit's model has no tokenizer"):
            vllm_engine.generate(["a text prompt"], use_tqdm=False)
    finally:
        vllm_engine.shutdown()
    reference_engine = LLM(platform=load_platform("cpu"), **settings)
    try:
        reference = completions(reference_engine, FILTERED_PROMPTS, requests)
    finally:
        reference_engine.shutdown()
    for completion, params in zip(drawn, requests):
        assert not pick_problems(completion.tokens, completion.logprobs, params)
    assert [c.tokens for c in drawn] == [c.tokens for c in again]
    # Where more than the top token may be drawn, the two streams part.
    assert all(ours.tokens != theirs.tokens for ours, theirs, params in zip(drawn, reference, requests)
               if params.temperature >= 1 and params.top_k != 1 and params.top_p > 0.01)
