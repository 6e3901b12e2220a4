"""``Sequence``: one request as the scheduler tracks it."""

from __future__ import annotations

import enum

from conformance.contract.sampling_params import SamplingParams


class SequenceStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


class Sequence:
    """A prompt and the tokens generated so far.

    ``num_computed_tokens`` counts tokens whose keys and values are in the KV cache;
    every token beyond it is computed in a later step (a whole prompt, a prefill
    chunk, one decode token, or everything again after preemption), and a token is
    sampled when a step brings ``num_computed_tokens`` up to ``num_tokens``.
    """

    def __init__(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams):
        self.request_id = request_id
        self.token_ids = list(prompt_token_ids)
        self.num_prompt_tokens = len(prompt_token_ids)
        self.params = params
        self.status = SequenceStatus.WAITING
        self.num_computed_tokens = 0
        self.block_table: list[int] = []
        self.logprobs: list[dict[int, tuple[float, int]]] = []
        self.finish_reason: str | None = None

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_output_tokens(self) -> int:
        return self.num_tokens - self.num_prompt_tokens
