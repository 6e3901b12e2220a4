"""The Worker suite's script: hand-made scheduler steps, and workers driven through it
in the engine's order by the engine's own executors.

The steps are teacher-forced (every decode feeds fixed token ids, not what the last
step sampled), so each step's expected output depends only on the model and its
inputs, and one wrong step cannot spoil the comparison of the next.
"""

from __future__ import annotations

import copy
import dataclasses
import math

import torch

from conformance.contract.attention import AttentionSelectorConfig
from conformance.contract.config import EngineConfig
from conformance.contract.platform import Platform
from conformance.contract.sampling_params import SamplingParams
from conformance.contract.worker import (
    ModelRunnerOutput,
    ScheduledRequest,
    SchedulerOutput,
)
from conformance.reference_engine.distributed.rank_processes import RankCrashed, RankTimeout
from conformance.reference_engine.executor import MultiprocExecutor, UniProcExecutor
from conformance.reference_engine.models.config import get_model_config
from conformance.results.outcomes import Crashed, TimedOut
from conformance.suites.closeness import TOP_N, Logprobs, Tolerance, position_problem
from conformance.suites.model_settings import MAX_MODEL_LEN, block_size_for, host_threads
from conformance.suites.sampling import FILTERED
from conformance.suites.support import exercised

#: KV-cache blocks of the script's workers: room for every request of the script in
#: blocks of 8 tokens or more.
NUM_BLOCKS = 64
#: Every method an executor calls on a worker through ``collective_rpc``, with the
#: arguments it passes (``None`` stands for a ``SchedulerOutput``).
EXECUTOR_CALLS = {
    "init_device": (), "load_model": (), "determine_available_memory": (),
    "initialize_cache": (NUM_BLOCKS,), "execute_model": (None,), "check_health": (),
    "shutdown": (),
}

GREEDY = SamplingParams(temperature=0.0, logprobs=TOP_N)
#: The request without a seed samples this hot: two independent draws from the tiny
#: model then agree with probability about 5e-4 (2e-3 at temperature 3; 0.39 at
#: temperature 1, where its top token holds 0.6), so a generator seeded from entropy
#: repeats both of the script's draws about once in four million runs, not once in six.
UNSEEDED_TEMPERATURE = 5.0


def engine_config(platform: type[Platform], dtype: torch.dtype, model: str, **overrides) -> EngineConfig:
    """The config ``LLM`` would build for the tiny ``model`` on ``platform``."""
    model_config = get_model_config(model)
    settings = dict(block_size=block_size_for(platform),
                    max_model_len=MAX_MODEL_LEN, max_num_seqs=8, max_num_batched_tokens=256)
    config = EngineConfig(model=model, architecture=model_config.architecture, dtype=dtype,
                          platform=platform, **{**settings, **overrides})
    platform.check_and_update_config(config)
    exercised(head_sizes=model_config.head_size, block_sizes=config.block_size, dtypes=config.dtype,
              kv_cache_dtypes=config.kv_cache_dtype)
    config.attention_backend = platform.get_attn_backend_cls(AttentionSelectorConfig(
        head_size=model_config.head_size, dtype=config.dtype, block_size=config.block_size,
        kv_cache_dtype=config.kv_cache_dtype))
    return config


@dataclasses.dataclass
class Step:
    kind: str  # "prefill", "decode", "mixed", "seeded" or "filtered"
    output: SchedulerOutput


#: Tokens any one request of the script reaches, at most.
REQUEST_LEN = 32


class _Request:
    """A request's bookkeeping while the script is written: its own blocks, enough
    for ``REQUEST_LEN`` tokens."""

    def __init__(self, request_id: str, blocks: list[int]) -> None:
        self.id = request_id
        self.blocks = blocks
        self.computed = 0
        self.outputs = 0

    def schedule(self, token_ids: list[int], params: SamplingParams, sample: bool = True) -> ScheduledRequest:
        scheduled = ScheduledRequest(self.id, token_ids, self.computed, list(self.blocks), params,
                                     self.outputs, sample)
        self.computed += len(token_ids)
        self.outputs += sample
        return scheduled


def _tokens(n: int, salt: int) -> list[int]:
    return [(salt * 131 + 37 * k) % 4000 + 10 for k in range(n)]


def script(block_size: int) -> list[Step]:
    """Prefill of two requests, three decodes, two mixed steps (a chunked prefill
    beside decodes), a seeded sampling step twice over, unchanged, then a seeded step
    with temperature, top-k and top-p filters."""
    names = ["a", "b", "c", "d1", "d2", "d3", "e", *(f"f{i}" for i in range(len(FILTERED)))]
    per_request = math.ceil(REQUEST_LEN / block_size)
    assert len(names) * per_request <= NUM_BLOCKS
    a, b, c, *seeded = (_Request(name, list(range(i * per_request, (i + 1) * per_request)))
                        for i, name in enumerate(names))
    seeded, filtered = seeded[: -len(FILTERED)], seeded[-len(FILTERED):]
    steps = [Step("prefill", SchedulerOutput([a.schedule(_tokens(19, 1), GREEDY),
                                              b.schedule(_tokens(7, 2), GREEDY)]))]
    for i in range(3):
        steps.append(Step("decode", SchedulerOutput([a.schedule(_tokens(1, 10 + i), GREEDY),
                                                     b.schedule(_tokens(1, 20 + i), GREEDY)])))
    steps.append(Step("mixed", SchedulerOutput([c.schedule(_tokens(12, 3), GREEDY, sample=False),
                                                a.schedule(_tokens(1, 30), GREEDY),
                                                b.schedule(_tokens(1, 31), GREEDY)])))
    steps.append(Step("mixed", SchedulerOutput([a.schedule(_tokens(1, 32), GREEDY),
                                                c.schedule(_tokens(9, 4), GREEDY),
                                                b.schedule(_tokens(1, 33), GREEDY)])))
    *with_seed, unseeded = seeded
    seeded_step = SchedulerOutput(
        [r.schedule(_tokens(5 + i, 40 + i), SamplingParams(temperature=1.0, seed=1000 + i))
         for i, r in enumerate(with_seed)]
        + [unseeded.schedule(_tokens(8, 50), SamplingParams(temperature=UNSEEDED_TEMPERATURE))])
    steps += [Step("seeded", seeded_step), Step("seeded", copy.deepcopy(seeded_step))]
    steps.append(Step("filtered", SchedulerOutput(
        [r.schedule(_tokens(6 + i, 60 + i), params) for i, (r, params) in enumerate(zip(filtered, FILTERED))])))
    return steps


@dataclasses.dataclass
class StepResult:
    """What one step returned: per sampled request, its token and logprobs."""

    req_ids: list[str]
    tokens: list[int]
    logprobs: list[Logprobs]

    @classmethod
    def of(cls, output: ModelRunnerOutput) -> StepResult:
        rows = output.logprobs or [{} for _ in output.req_ids]
        return cls(list(output.req_ids), [int(t) for t in output.sampled_token_ids],
                   [{int(t): float(lp) for t, (lp, _) in row.items()} for row in rows])


class StepResults(list):
    """Per step, what it returned or the error it raised, raised again where a test
    reads that step: a worker that fails one kind of request fails the tests that
    judge that step (and the lifecycle's, which reads every step), not all of them."""

    def __getitem__(self, index):
        result = super().__getitem__(index)
        if isinstance(result, Exception):
            raise result
        return result

    def __iter__(self):
        return (self[i] for i in range(len(self)))


@dataclasses.dataclass
class Run:
    """A worker driven through the script from start to shutdown."""

    available_memory: list[int]  # two calls of determine_available_memory
    steps: list[Step]
    results: StepResults


def drive(executor, steps: list[Step]) -> Run:
    """The engine's order after the executor built the workers: available memory
    (asked twice), cache, every step, health check, shutdown."""
    try:
        available = [executor.collective_rpc("determine_available_memory")[0] for _ in range(2)]
        executor.collective_rpc("initialize_cache", (NUM_BLOCKS,))
        results = StepResults()
        for step in steps:
            try:
                # A copy per call: a worker may keep or change what it is given.
                results.append(StepResult.of(executor.execute_model(copy.deepcopy(step.output))))
            except (TimedOut, Crashed, RankTimeout, RankCrashed):
                raise  # the worker is gone: the run's outcome, not one step's
            except Exception as error:  # raised again where a test reads this step
                results.append(error)
        executor.collective_rpc("check_health")
    finally:
        executor.shutdown()
    return Run(available, steps, results)


def step_problems(reference: Run, indices: list[int], results: list[StepResult],
                  tolerance: Tolerance, rule=position_problem) -> list[str]:
    """Where ``results`` (of the script's steps ``indices``) differ from the
    reference's: other requests sampled, or a pick or its logprobs outside the
    tolerance by ``rule`` (of ``closeness`` or ``sampling``)."""
    problems = []
    for i, got in zip(indices, results, strict=True):
        ref = reference.results[i]
        if got.req_ids != ref.req_ids:
            problems.append(f"step {i}: sampled requests {got.req_ids}, expected {ref.req_ids}")
            continue
        for rid, *position in zip(ref.req_ids, ref.tokens, ref.logprobs, got.tokens, got.logprobs):
            if problem := rule(*position, tolerance):
                problems.append(f"step {i} ({reference.steps[i].kind}), request {rid!r}: {problem}")
    return problems


def run_in_process(config: EngineConfig, steps: list[Step]) -> Run:
    """The script on the config's platform's worker, in this process."""
    with host_threads():
        return drive(UniProcExecutor(config), steps)


def run_multiprocess(config: EngineConfig, steps: list[Step]) -> Run:
    """The script on one spawned rank process, told its platform by the config."""
    config = dataclasses.replace(config, distributed_executor_backend="mp")
    with host_threads():
        return drive(MultiprocExecutor(config), steps)
