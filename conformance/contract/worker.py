"""The worker contract: one process's view of the model on one device, and what
crosses between the scheduler and the workers each step.

An executor drives a worker through ``collective_rpc`` in a fixed order (as vLLM's v1
engine does): ``init_device`` -> ``load_model`` -> ``determine_available_memory`` ->
``initialize_cache`` -> ``execute_model`` (repeatedly) -> ``check_health`` ->
``shutdown``. The reference engine's generic ``Worker`` implements it for any platform
through the platform it is handed (``config.platform``); a plugin overrides it only
when it must. The step objects are picklable, so the same objects go to a worker in
another process.

Rule ``worker.lifecycle.in_process``: driven in process in the engine's order, the
worker completes every call, and each step returns one in-vocabulary token per
request that reaches its end, in schedule order.

Rule ``worker.lifecycle.multiprocess``: driven through the engine's
one-process-per-rank executor (a spawned process told its platform by the config,
every call through ``collective_rpc``), the worker completes the engine's order of
calls and returns the reference worker's greedy tokens for every prefill, decode and
mixed step.
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
    must implement every method below.

    Rule ``worker.rpc.methods``: every method an executor calls through
    ``collective_rpc`` (``init_device``, ``load_model``,
    ``determine_available_memory``, ``initialize_cache``, ``execute_model``,
    ``check_health``, ``shutdown``) is a concrete method of the platform's worker
    class that accepts the arguments the executor passes, and the worker takes the
    executor's constructor arguments.
    """

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

        Rule ``worker.memory.available_bounds``: after loading the model it is a
        positive int, not above the device's total memory.

        Rule ``worker.memory.stable``: asked twice in a row, it answers the same.

        Rule ``worker.memory.fraction``: with ``config.memory_fraction`` f, it is at
        most f times the device's total memory, less what the worker itself took on
        the device in loading the model.
        """

    @abc.abstractmethod
    def initialize_cache(self, num_blocks: int) -> None:
        """Allocate ``num_blocks`` KV-cache blocks for every attention layer."""

    @abc.abstractmethod
    def execute_model(self, scheduler_output: SchedulerOutput) -> ModelRunnerOutput:
        """Run one scheduled step and return the tokens it sampled.

        Rule ``worker.execute.prefill``: a batch of prefills returns, per request, the
        reference worker's greedy token (in float32 exactly; in half dtypes by the
        top-N closeness rule) and logprobs within the dtype's tolerance.

        Rule ``worker.execute.decode``: successive decode steps return, per request,
        the reference worker's greedy token for that step and logprobs within the
        dtype's tolerance, in every declared block size and dtype (against the
        reference where it declares that block size too) and with the cache in every
        declared KV-cache dtype (by the cache dtype's tolerance where it is coarser).

        Rule ``worker.execute.mixed``: a batch mixing a chunked prefill with decodes
        samples only the requests that reach their end, each with the reference
        worker's greedy token and logprobs within the dtype's tolerance.

        Rule ``worker.execute.seeded_sampling``: a request with a seed samples the
        same token whenever the same step is run again (whatever the worker's own
        generator has drawn since) and, in float32, the token the reference worker
        samples; a request without one draws from the worker's own generator, seeded
        with ``config.seed`` (the engine's seed, as vLLM's workers seed theirs): two
        workers built from one config sample the same tokens for it through the same
        steps.

        Rule ``worker.execute.sampling_params``: seeded requests with temperature,
        ``top_k`` and ``top_p`` (and ``logprobs=N``) sample only inside their
        filters: a ``top_k`` request's token is among its own top k logprobs; in
        float32 each picks the reference worker's token exactly (in half dtypes a
        draw may flip with rounding), and the logprobs of the chosen and the top-N
        tokens are within the dtype's tolerance of the reference's. Each parameter
        means what ``SamplingParams`` says at its boundary values too (``top_k=-1``,
        a ``top_k`` beyond the vocabulary, ``top_p=1``, ``logprobs=0``, a temperature
        of 1e-5), and each sampled request reports exactly the logprobs its
        ``logprobs=N`` asks for.
        """

    def check_health(self) -> None:
        """Raise if the worker can no longer compute. A worker with no health
        signal of its own is healthy while it answers."""

    @abc.abstractmethod
    def shutdown(self) -> None:
        """Release the model, the KV cache and every device buffer the worker holds.

        Rule ``worker.memory.shutdown_releases``: after ``shutdown()`` (the worker
        object still alive, as an executor keeps it), ``memory_allocated()`` falls
        back by at least half of what loading the model and a large KV cache added
        (the growth must show at least half the cache's size).
        """
