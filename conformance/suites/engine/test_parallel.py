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
    """A 2-rank ``mp`` engine (``not_supported`` unless declared, skipped without the
    devices) generates 6 greedy tokens for two prompts, compared with the reference's
    one-rank prefix (float32 under ``TENSOR_PARALLEL``)."""
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
