"""Engine suite, tensor parallel: two ranks through the plugin's engine's multiprocess
executor generate what one reference rank does."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.suites.closeness import TENSOR_PARALLEL, TOLERANCES, sequence_problem
from conformance.suites.engine.generations import GREEDY, LLM_SETTINGS, PROMPTS, completions, engine_for
from conformance.suites.model_settings import block_size_for, dtype_name, host_threads
from conformance.suites.ranks import ranks_on
from conformance.suites.support import not_supported, require_feature

WORLD_SIZE = 2
MAX_TOKENS = 6


@pytest.mark.contract("engine.parallel.tensor_parallel")
def test_tensor_parallel_matches_one_rank(platform, generations, suite_dtype):
    """Where the plugin declares ``tensor_parallel`` with a max world size of at least
    2, a tensor-parallel engine of 2 ranks (one spawned process each) generates the
    reference platform's greedy tokens of one rank, by the dtype's rule (float32 may
    differ only at a near-tie, as the reduction order changes)."""
    require_feature(platform, "tensor_parallel")
    if platform.capabilities.max_world_size < WORLD_SIZE:
        not_supported(f"max_world_size {platform.capabilities.max_world_size} < {WORLD_SIZE}")
    reason = ranks_on(platform, WORLD_SIZE)
    if reason is not None:  # declared, but this machine has too few devices to check it
        pytest.skip(reason)
    params = dataclasses.replace(GREEDY, max_tokens=MAX_TOKENS)
    with host_threads():
        llm = engine_for(platform)(model=generations.model, dtype=dtype_name(suite_dtype),
                                   platform=platform, block_size=block_size_for(platform),
                                   tensor_parallel_size=WORLD_SIZE, distributed_executor_backend="mp",
                                   **LLM_SETTINGS)
        try:
            parallel = completions(llm, PROMPTS[:2], params)
        finally:
            llm.shutdown()
    tolerance = TENSOR_PARALLEL if TOLERANCES[suite_dtype].exact_tokens else TOLERANCES[suite_dtype]
    problems = []
    for i, (ref, got) in enumerate(zip(generations.reference(suite_dtype)["greedy"], parallel)):
        n = len(got.tokens)
        if problem := sequence_problem(ref.tokens[:n], ref.logprobs[:n], got.tokens, got.logprobs, tolerance):
            problems.append(f"prompt {i}: {problem}")
    assert not problems, "\n".join(problems)
