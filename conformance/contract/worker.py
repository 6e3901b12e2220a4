"""The worker contract: one process's view of the model on one device, and what
crosses between the scheduler and the workers each step.

An executor drives a worker through ``collective_rpc`` in a fixed order (as vLLM's v1
engine does): ``init_device`` -> ``load_model`` -> ``determine_available_memory`` ->
``initialize_cache`` -> ``execute_model`` (repeatedly) -> ``check_health`` ->
``shutdown``. The reference engine's generic ``Worker`` implements it for any platform
through the platform it is handed (``config.platform``); a plugin overrides it only
when it must. The step objects are picklable, so the same objects go to a worker in
another process.
"""

from __future__ import annotations

import abc
import dataclasses

from conformance.contract.config import EngineConfig
from conformance.contract.sampling_params import SamplingParams


@dataclasses.dataclass
class ScheduledRequest:
    """What a worker needs to compute one request's share of a step."""

    request_id: str
    token_ids: list[int]  # the new tokens to compute
    num_computed_tokens: int  # their first position
    block_table: list[int]
    params: SamplingParams
    num_output_tokens: int  # seeds the request's sampler: same step, same noise
    sample: bool  # whether this step reaches the end and samples a token


@dataclasses.dataclass
class SchedulerOutput:
    requests: list[ScheduledRequest]

    @property
    def num_tokens(self) -> int:
        return sum(len(r.token_ids) for r in self.requests)


@dataclasses.dataclass
class ModelRunnerOutput:
    """The tokens a step sampled, for the requests whose ``sample`` flag was set."""

    req_ids: list[str]
    sampled_token_ids: list[int]
    #: Per sampled request ``{token_id: (logprob, rank)}`` (sampled token and top N),
    #: or None when no request of the step asked for logprobs.
    logprobs: list[dict[int, tuple[float, int]]] | None = None


class WorkerBase(abc.ABC):
    """Base class of every worker. The executor calls methods by name, so a worker
    must implement every method below (the Worker suite checks each exists)."""

    def __init__(
        self,
        config: EngineConfig,
        local_rank: int = 0,
        rank: int = 0,
        distributed_init_method: str | None = None,
    ) -> None:
        self.config = config
        self.local_rank = local_rank
        self.rank = rank
        self.distributed_init_method = distributed_init_method

    @abc.abstractmethod
    def init_device(self) -> None:
        """Select this rank's device, initialise distributed state and seed it."""

    @abc.abstractmethod
    def load_model(self) -> None:
        """Build the model and put its weights on the device."""

    @abc.abstractmethod
    def determine_available_memory(self) -> int:
        """Bytes the KV cache may use after a profiling run.

        Rule: positive, not above the device's total memory, stable across calls,
        and within ``config.memory_fraction`` of the device's memory.
        """

    @abc.abstractmethod
    def initialize_cache(self, num_blocks: int) -> None:
        """Allocate ``num_blocks`` KV-cache blocks for every attention layer."""

    @abc.abstractmethod
    def execute_model(self, scheduler_output: SchedulerOutput) -> ModelRunnerOutput:
        """Run one scheduled step and return the tokens it sampled."""

    def check_health(self) -> None:
        """Raise if the worker can no longer compute. A worker with no health
        signal of its own is healthy while it answers."""

    @abc.abstractmethod
    def shutdown(self) -> None:
        """Release the model, the KV cache and every device buffer the worker holds.

        Rule: afterwards the device memory the worker allocated is given back.
        """
