"""Engine suite, generate: ``LLM.generate`` on the plugin against the reference
platform on the same seeded model."""

from __future__ import annotations

import pytest
import torch

from conformance.suites.closeness import TOLERANCES, sequence_problem
from conformance.suites.engine.generations import PROMPTS
from conformance.suites.model_settings import dtype_name
from conformance.suites.support import not_supported


def _require_dtype(capabilities, dtype: torch.dtype) -> None:
    if dtype not in capabilities.dtypes:
        not_supported(f"dtype {dtype_name(dtype)} is not declared")


def _assert_close(reference, plugin, tolerance, what: str) -> None:
    problems = []
    for i, (ref, got) in enumerate(zip(reference, plugin, strict=True)):
        if problem := sequence_problem(ref.tokens, ref.logprobs, got.tokens, got.logprobs, tolerance):
            problems.append(f"{what}, prompt {i} ({len(PROMPTS[i])} tokens): {problem}")
    assert not problems, "\n".join(problems)


@pytest.mark.contract("engine.generate.fp32_greedy")
def test_fp32_greedy_identical(capabilities, generations):
    """In float32, greedy generation of a batch of prompts gives exactly the reference
    platform's tokens, with logprobs within float32's tolerance."""
    _require_dtype(capabilities, torch.float32)
    _assert_close(generations.reference_greedy(torch.float32),
                  generations.plugin_greedy(torch.float32), TOLERANCES[torch.float32], "float32")


@pytest.mark.contract("engine.generate.half_logprobs_close")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_name)
def test_half_greedy_logprobs_close(capabilities, generations, dtype):
    """In bfloat16 and float16, greedy generation follows the reference platform's
    tokens until the first position where the two runs pick differently; there each
    pick must be among the other run's top-N logprobs (and the comparison stops), and
    before it logprobs of tokens both report are within the dtype's tolerance."""
    _require_dtype(capabilities, dtype)
    _assert_close(generations.reference_greedy(dtype), generations.plugin_greedy(dtype),
                  TOLERANCES[dtype], dtype_name(dtype))


@pytest.mark.contract("engine.generate.batch_invariance")
def test_alone_and_in_batch_agree(generations, suite_dtype):
    """A request generates the same completion alone as in a batch with others: greedy
    by the dtype's rule, and a seeded sampled request with identical tokens."""
    batch, extra = generations.plugin_with_batching(suite_dtype)
    tolerance = TOLERANCES[suite_dtype]
    _assert_close(batch[1:2], extra["greedy_alone"], tolerance, "greedy alone vs in a batch")
    alone, in_batch = extra["seeded_alone"][0].tokens, extra["seeded_batch"][1].tokens
    assert alone == in_batch, f"seeded request alone sampled {alone}, in a batch {in_batch}"
