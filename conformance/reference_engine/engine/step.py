"""What crosses between the scheduler and the workers each step (picklable, so the
same objects go to a worker in another process)."""

from __future__ import annotations

import dataclasses

from conformance.reference_engine.sampling_params import SamplingParams


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
