"""Worker suite, lifecycle: the engine's order of calls, in process and in a rank
process of the engine's multiprocess executor."""

from __future__ import annotations

import pytest

from conformance.reference_engine.models.config import get_model_config
from conformance.suites.worker import driving


@pytest.mark.contract("worker.lifecycle.in_process")
def test_full_lifecycle_in_process(worker_config, plugin_run):
    """Reads the session's in-process (``UniProcExecutor``) run of the whole script: per
    step, the sampled request ids against the schedule's, one token each, every token
    below the vocabulary size."""
    vocab = get_model_config(worker_config.model).vocab_size
    for i, (step, result) in enumerate(zip(plugin_run.steps, plugin_run.results)):
        expected = [r.request_id for r in step.output.requests if r.sample]
        assert result.req_ids == expected, f"step {i}: sampled {result.req_ids}, expected {expected}"
        assert len(result.tokens) == len(expected), f"step {i}: tokens {result.tokens}"
        assert all(0 <= t < vocab for t in result.tokens), f"step {i}: tokens {result.tokens}"


@pytest.mark.contract("worker.lifecycle.multiprocess")
def test_full_lifecycle_in_rank_process(worker_config, steps, reference_run,
                                        tolerance):
    """Drives the script's prefill, decode and mixed steps through ``MultiprocExecutor``
    (one spawned rank) and compares them with the reference worker's in-process run by
    the dtype's closeness rule."""
    greedy = [i for i, step in enumerate(steps) if step.kind in ("prefill", "decode", "mixed")]
    run = driving.run_multiprocess(worker_config, [steps[i] for i in greedy])
    problems = driving.step_problems(reference_run, greedy, run.results, tolerance)
    assert not problems, "\n".join(problems)
