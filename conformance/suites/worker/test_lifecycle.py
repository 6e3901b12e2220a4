"""Worker suite, lifecycle: the engine's order of calls, in process and in a rank
process of the engine's multiprocess executor."""

from __future__ import annotations

import pytest

from conformance.reference_engine.models.config import get_model_config
from conformance.suites.worker import driving


@pytest.mark.contract("worker.lifecycle.in_process")
def test_full_lifecycle_in_process(worker_config, plugin_run):
    """Driven in process in the engine's order (init_device, load_model,
    determine_available_memory, initialize_cache, execute_model repeatedly,
    check_health, shutdown), the worker completes every call and each step returns
    one in-vocabulary token per request that reaches its end, in schedule order."""
    vocab = get_model_config(worker_config.model).vocab_size
    for i, (step, result) in enumerate(zip(plugin_run.steps, plugin_run.results)):
        expected = [r.request_id for r in step.output.requests if r.sample]
        assert result.req_ids == expected, f"step {i}: sampled {result.req_ids}, expected {expected}"
        assert len(result.tokens) == len(expected), f"step {i}: tokens {result.tokens}"
        assert all(0 <= t < vocab for t in result.tokens), f"step {i}: tokens {result.tokens}"


@pytest.mark.contract("worker.lifecycle.multiprocess")
def test_full_lifecycle_in_rank_process(worker_config, steps, reference_run,
                                        tolerance):
    """Driven through the engine's one-process-per-rank executor (a spawned process
    told its platform by the config, every call through ``collective_rpc``), the worker
    completes the engine's order of calls and returns the reference worker's greedy
    tokens for every prefill, decode and mixed step."""
    greedy = [i for i, step in enumerate(steps) if step.kind in ("prefill", "decode", "mixed")]
    run = driving.run_multiprocess(worker_config, [steps[i] for i in greedy])
    problems = driving.step_problems(reference_run, greedy, run.results, tolerance)
    assert not problems, "\n".join(problems)
