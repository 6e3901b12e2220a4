"""Engine suite, generate: ``LLM.generate`` on the plugin against the reference
platform on the same seeded model."""

from __future__ import annotations

import pytest
import torch

from conformance.suites.closeness import TOLERANCES, sequence_problem, tolerance_for
from conformance.suites.engine.generations import FILTERED_PROMPTS, FILTERED_REQUESTS, PROMPTS
from conformance.suites.model_settings import dtype_name
from conformance.suites.sampling import pick_problems, sampled_position_problem
from conformance.suites.support import not_supported


def _require_dtype(capabilities, dtype: torch.dtype) -> None:
    if dtype not in capabilities.dtypes:
        not_supported(f"dtype {dtype_name(dtype)} is not declared")


def _close_problems(reference, plugin, tolerance, what: str, prompts=PROMPTS, **rule) -> list[str]:
    return [f"{what}, prompt {i} ({len(prompts[i])} tokens): {problem}"
            for i, (ref, got) in enumerate(zip(reference, plugin, strict=True))
            if (problem := sequence_problem(ref.tokens, ref.logprobs, got.tokens, got.logprobs,
                                            tolerance, **rule))]


def _assert_close(reference, plugin, tolerance, what: str) -> None:
    problems = _close_problems(reference, plugin, tolerance, what)
    assert not problems, "\n".join(problems)


@pytest.mark.contract("engine.generate.fp32_greedy")
def test_fp32_greedy_identical(capabilities, generations):
    """Greedy 12-token completions of three prompts (6, 23 and 33 tokens) in one batch,
    plugin's engine vs the reference platform's, compared by ``sequence_problem`` with
    float32's exact-token tolerance."""
    _require_dtype(capabilities, torch.float32)
    _assert_close(generations.reference(torch.float32)["greedy"],
                  generations.plugin(torch.float32)["greedy"], TOLERANCES[torch.float32], "float32")


@pytest.mark.contract("engine.generate.half_logprobs_close")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_name)
def test_half_greedy_logprobs_close(capabilities, generations, dtype):
    """The three-prompt greedy batch in bfloat16 and float16 (each ``not_supported``
    unless declared), compared with the reference platform's by ``sequence_problem``
    under that dtype's tolerance."""
    _require_dtype(capabilities, dtype)
    _assert_close(generations.reference(dtype)["greedy"], generations.plugin(dtype)["greedy"],
                  TOLERANCES[dtype], dtype_name(dtype))


@pytest.mark.contract("engine.generate.block_sizes")
def test_every_declared_block_size(platform, generations, suite_dtype):
    """Regenerates the greedy batch in each other declared block size, and with the
    cache in each declared KV-cache dtype besides ``"auto"`` (``not_supported`` with
    neither), and compares it, prompt by prompt, with the reference's in the suite's
    block size and dtype's cache, by the suite dtype's tolerance (the cache dtype's
    where coarser)."""
    caps, block_size = platform.capabilities, generations.block_size
    variants = [(size, "auto") for size in caps.block_sizes if size != block_size]
    variants += [(block_size, cache) for cache in caps.kv_cache_dtypes if cache != "auto"]
    if not variants:
        not_supported(f"one block size is declared ({block_size}) and no KV-cache dtype but "
                      "'auto', and the other Engine tests run them")
    reference = generations.reference(suite_dtype)["greedy"]
    problems = [problem for size, cache in variants
                for problem in _close_problems(reference, generations.plugin_greedy_in(suite_dtype, size, cache),
                                               tolerance_for(suite_dtype, cache),
                                               f"block size {size}, KV-cache dtype {cache!r}")]
    assert not problems, "\n".join(problems)


@pytest.mark.contract("engine.generate.sampling_params")
def test_filtered_sampling_matches_reference(generations, suite_dtype):
    """Each seeded request of ``sampling.FILTERED`` (the narrowest filters and each
    parameter's boundary value among them) on a prompt of three, in one batch, for 6
    tokens: each position's pick and logprobs are checked with ``pick_problems``, and
    completions compared with the reference's by ``sampled_position_problem``."""
    plugin = generations.plugin(suite_dtype)["filtered"]
    problems = [f"request {i}, {problem}"
                for i, (completion, params) in enumerate(zip(plugin, FILTERED_REQUESTS))
                for problem in pick_problems(completion.tokens, completion.logprobs, params)]
    problems += _close_problems(generations.reference(suite_dtype)["filtered"], plugin,
                                TOLERANCES[suite_dtype], "filtered", FILTERED_PROMPTS,
                                rule=sampled_position_problem)
    assert not problems, "\n".join(problems[:5])


@pytest.mark.contract("engine.generate.batch_invariance")
def test_alone_and_in_batch_agree(generations, suite_dtype):
    """From one plugin engine: the 23-token prompt greedy alone vs in the three-prompt
    batch, by the dtype's tolerance, and sampled with seed 4321 alone vs in the batch,
    tokens compared exactly."""
    runs = generations.plugin(suite_dtype)
    _assert_close(runs["greedy"][1:2], runs["greedy_alone"], TOLERANCES[suite_dtype],
                  "greedy alone vs in a batch")
    alone, in_batch = runs["seeded_alone"][0].tokens, runs["seeded_batch"][1].tokens
    assert alone == in_batch, f"seeded request alone sampled {alone}, in a batch {in_batch}"
