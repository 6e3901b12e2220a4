"""The sampler: greedy, temperature, top-k, top-p, seeds, logprobs, stop conditions."""

from __future__ import annotations

import math

import torch

from conformance.contract.worker import ScheduledRequest
from conformance.reference_engine import SamplingParams
from conformance.reference_engine.platforms import resolve_platform
from conformance.reference_engine.sampler import Sampler

PROMPT = {"prompt_token_ids": [1, 40, 41, 42, 43, 44]}
OTHERS = [{"prompt_token_ids": [1] + list(range(100, 100 + n))} for n in (3, 30, 60)]


def first(outputs):
    return outputs[0].outputs[0]


def request(params: SamplingParams, step: int = 0) -> ScheduledRequest:
    return ScheduledRequest("r", [5], 0, [0], params, step, True)


def test_seeded_request_ignores_the_rest_of_the_batch(tiny_llm):
    """Rule: a request with a seed samples the same tokens alone and in any batch."""
    seeded = SamplingParams(temperature=1.0, seed=1234, max_tokens=20, ignore_eos=True)
    unseeded = SamplingParams(temperature=1.0, max_tokens=12, ignore_eos=True)
    alone = first(tiny_llm.generate(PROMPT, seeded)).token_ids
    batch = tiny_llm.generate(OTHERS + [PROMPT], [unseeded] * 3 + [seeded])
    assert batch[-1].outputs[0].token_ids == alone
    other_seed = SamplingParams(temperature=1.0, seed=4321, max_tokens=20, ignore_eos=True)
    assert first(tiny_llm.generate(PROMPT, other_seed)).token_ids != alone


def test_temperature_zero_and_top_k_one_are_greedy(tiny_llm):
    """Rule: temperature 0, top_k=1 and a tiny top_p all pick the most likely token."""
    greedy = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=10)))
    top_k = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=5.0, top_k=1, max_tokens=10)))
    top_p = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=5.0, top_p=1e-6, max_tokens=10)))
    assert greedy.token_ids == top_k.token_ids == top_p.token_ids


def test_top_k_and_top_p_keep_only_their_sets():
    """Rule: top-k samples only among the k most likely tokens; top-p only within the
    smallest set whose probability reaches p."""
    sampler = Sampler(resolve_platform(None).torch_device(), seed=0)
    logits = torch.tensor([[4.0, 3.0, 2.0, 1.0, 0.0, -1.0]], device=sampler.device).repeat(400, 1)
    k_params = SamplingParams(temperature=3.0, top_k=2)
    tokens, _ = sampler(logits, [request(k_params)] * 400)
    assert set(tokens) == {0, 1}
    probs = logits[0].softmax(-1)  # 0.64, 0.24, 0.09, ...: 0.88 reaches p=0.85
    assert probs[:2].sum() >= 0.85 > probs[:1].sum()
    tokens, _ = sampler(logits, [request(SamplingParams(temperature=1.0, top_p=0.85))] * 400)
    assert set(tokens) == {0, 1}


def test_temperature_sampling_follows_the_distribution():
    """Rule: unfiltered sampling draws tokens with the softmax(logits / T) frequencies."""
    sampler = Sampler(resolve_platform(None).torch_device(), seed=0)
    logits = torch.tensor([[1.0, 0.0, -1.0]], device=sampler.device).repeat(4000, 1)
    tokens, _ = sampler(logits, [request(SamplingParams(temperature=2.0))] * 4000)
    expected = (logits[0] / 2.0).softmax(-1).cpu()
    observed = torch.bincount(torch.tensor(tokens), minlength=3) / 4000
    assert torch.allclose(observed, expected, atol=0.03)


def test_logprobs_report_sampled_and_top_tokens(tiny_llm):
    """Rule: logprobs=N gives, per generated token, the sampled token's log-probability
    and rank plus the N most likely tokens, ranked 1..N and normalised."""
    out = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=1.0, seed=7, max_tokens=6, logprobs=3)))
    assert len(out.logprobs) == len(out.token_ids) == 6
    for token, step in zip(out.token_ids, out.logprobs):
        assert token in step and 3 <= len(step) <= 4
        top = sorted((lp for lp in step.values() if lp.rank <= 3), key=lambda lp: lp.rank)
        assert [lp.rank for lp in top] == [1, 2, 3]
        assert top[0].logprob >= top[1].logprob >= top[2].logprob
        assert all(lp.logprob <= 0 for lp in step.values())
    assert math.isclose(out.cumulative_logprob, sum(s[t].logprob for t, s in zip(out.token_ids, out.logprobs)))
    greedy = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=4, logprobs=0)))
    assert all(step[t].rank == 1 and len(step) == 1 for t, step in zip(greedy.token_ids, greedy.logprobs))


def test_stop_conditions(tiny_llm):
    """Rule: a stop token ends the output (kept as its last token, reason "stop");
    max_tokens ends it with reason "length"; EOS stops unless ignore_eos."""
    free = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=12, ignore_eos=True)))
    assert len(free.token_ids) == 12 and free.finish_reason == "length"
    stop_at = free.token_ids[5]
    stopped = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=12, stop_token_ids=[stop_at])))
    assert stopped.token_ids == free.token_ids[: free.token_ids.index(stop_at) + 1]
    assert stopped.finish_reason == "stop"
    eos = next(iter(tiny_llm.tokenizer.eos_token_ids))
    forced = SamplingParams(temperature=0, max_tokens=12)
    tiny_llm.llm_engine.scheduler.eos_token_ids = frozenset({stop_at})  # make EOS likely
    try:
        as_eos = first(tiny_llm.generate(PROMPT, forced))
        ignored = first(tiny_llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=12, ignore_eos=True)))
    finally:
        tiny_llm.llm_engine.scheduler.eos_token_ids = frozenset({eos})
    assert as_eos.token_ids == stopped.token_ids and as_eos.finish_reason == "stop"
    assert ignored.token_ids == free.token_ids


def test_a_token_tied_with_the_kth_is_inside_top_k():
    """The top-k rule of the suites: a token below the k-th logprob was outside the
    filter; one tied with it (half-dtype logits take few values) was inside, whichever
    of the tied tokens a sort lists first."""
    from conformance.suites.sampling import impossible_pick

    params = SamplingParams(temperature=3.0, top_k=2, seed=1)
    logprobs = {10: -0.5, 11: -1.0, 12: -1.0, 13: -2.0}
    assert impossible_pick(12, logprobs, params) is None and impossible_pick(11, logprobs, params) is None
    assert "sampled 13 outside its top 2" in impossible_pick(13, logprobs, params)


def test_near_zero_temperature_leaves_the_top_token_and_its_near_ties():
    """At temperature 1e-5 a token 1e-3 below the top one had odds of e**-100 and is an
    impossible pick; one 1e-4 below (e**-10) is a possible one, and so is any token at
    temperature 5 or top_k=-1."""
    from conformance.suites.sampling import NEAR_ZERO_TEMPERATURE, impossible_pick

    logprobs = {10: -0.5, 11: -0.5001, 12: -0.501}
    cold = SamplingParams(temperature=NEAR_ZERO_TEMPERATURE, seed=1)
    assert impossible_pick(10, logprobs, cold) is None and impossible_pick(11, logprobs, cold) is None
    assert "odds were below" in impossible_pick(12, logprobs, cold)
    for params in (SamplingParams(temperature=5.0, seed=1), SamplingParams(temperature=5.0, top_k=-1, seed=1)):
        assert impossible_pick(12, logprobs, params) is None


def test_logprobs_rows_hold_the_sampled_token_and_the_n_most_likely():
    """``logprobs=N``: N entries where the sampled token is among the N most likely,
    N + 1 where it is not, and the sampled token's always; ``logprobs=0``, its alone.
    A missing row, a fixed count and a falsy 0 read as "none" are each a problem."""
    from conformance.suites.sampling import logprobs_problem, pick_problems

    row = {10: -0.5, 11: -1.0, 12: -2.0}
    assert logprobs_problem(10, {10: -0.5, 11: -1.0}, 2) is None
    assert logprobs_problem(12, row, 2) is None
    assert logprobs_problem(12, {12: -2.0}, 0) is None
    assert logprobs_problem(12, {}, None) is None
    assert "no logprob reported for the sampled token 12" in logprobs_problem(12, {}, 0)
    assert "3 logprobs reported" in logprobs_problem(10, row, 2)  # one too many
    assert "3 logprobs reported" in logprobs_problem(12, row, 0)
    assert "2 logprobs reported" in logprobs_problem(12, {11: -1.0, 12: -2.0}, 5)
    assert pick_problems([10, 11], [{10: -0.5}], SamplingParams(temperature=1.0, logprobs=0)) == [
        "position 1: no logprob reported for the sampled token 11 (logprobs=0, reported [])"]
