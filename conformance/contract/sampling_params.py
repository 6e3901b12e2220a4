"""``SamplingParams``: how one request picks its next tokens (vLLM's names and defaults)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class SamplingParams:
    """Per-request sampling settings, checked on construction.

    ``temperature == 0`` is greedy; any positive temperature samples, so near zero
    (1e-5) it draws the most likely token but for near-ties. ``top_k`` of 0 or -1, or
    not below the vocabulary's size, and ``top_p`` of 1 filter nothing. ``seed``
    makes the request's samples independent of the rest of the batch.
    ``logprobs=N`` returns, for every generated token, the log-probability of the
    sampled token and of the N most likely ones, no others (``logprobs=0``: the
    sampled token's alone), computed from the model's raw distribution, before
    temperature and filters, as vLLM's default.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    max_tokens: int = 16
    stop_token_ids: list[int] = dataclasses.field(default_factory=list)
    ignore_eos: bool = False
    logprobs: int | None = None

    def __post_init__(self) -> None:
        self.stop_token_ids = list(self.stop_token_ids)
        self.verify()

    def verify(self) -> None:
        """Raise ``ValueError`` naming the first invalid field (the engine checks
        again on submission, since the object may have been changed since)."""
        problem = self._problem()
        if problem:
            raise ValueError(f"invalid SamplingParams: {problem}")

    def _problem(self) -> str | None:
        if not self.temperature >= 0:  # also rejects NaN
            return f"temperature must be >= 0, got {self.temperature}"
        if not 0 < self.top_p <= 1:
            return f"top_p must be in (0, 1], got {self.top_p}"
        if not isinstance(self.top_k, int) or self.top_k < -1:
            return f"top_k must be -1, 0 (disabled) or a positive int, got {self.top_k!r}"
        if not isinstance(self.max_tokens, int) or self.max_tokens <= 0:
            return f"max_tokens must be a positive int, got {self.max_tokens!r}"
        if self.seed is not None and not isinstance(self.seed, int):
            return f"seed must be an int or None, got {self.seed!r}"
        if self.logprobs is not None and (
            not isinstance(self.logprobs, int) or self.logprobs < 0
        ):
            return f"logprobs must be None or an int >= 0, got {self.logprobs!r}"
        if any(not isinstance(t, int) or t < 0 for t in self.stop_token_ids):
            return f"stop_token_ids must be non-negative ints, got {self.stop_token_ids!r}"
        return None

    @property
    def greedy(self) -> bool:
        return self.temperature == 0
