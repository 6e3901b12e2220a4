"""What ``LLM.generate`` returns, shaped as vLLM's ``RequestOutput``."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class Logprob:
    """Log-probability of one token at one step, and its rank (1 = most likely)."""

    logprob: float
    rank: int
    decoded_token: str | None = None


@dataclasses.dataclass
class CompletionOutput:
    """One generated continuation of a prompt."""

    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    #: Per generated token, ``{token_id: Logprob}`` for the sampled token and the top
    #: N; None unless the request asked for logprobs.
    logprobs: list[dict[int, Logprob]] | None
    #: ``"stop"`` (EOS or a stop token), ``"length"`` (max_tokens or max_model_len).
    finish_reason: str | None


@dataclasses.dataclass
class RequestOutput:
    """A request's prompt and its completions."""

    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool
