"""``Sampler``: next tokens from logits, for a whole batch at once.

Sampling is an exponential race (``argmax(p / q)`` with ``q ~ Exp(1)``), which draws
exactly from ``p``. A request with a ``seed`` draws its ``q`` from its own generator,
seeded by (seed, number of tokens it has generated) and drawn on the host, so its
samples depend neither on what else is in the batch, nor on preemption, nor on the
device; the others share the worker's generator.
"""

from __future__ import annotations

import torch

from conformance.contract.worker import ScheduledRequest


class Sampler:
    def __init__(self, device: torch.device, seed: int) -> None:
        self.device = device
        self.generator = torch.Generator(device=device).manual_seed(seed)

    def __call__(
        self, logits: torch.Tensor, requests: list[ScheduledRequest]
    ) -> tuple[list[int], list[dict[int, tuple[float, int]]] | None]:
        """Sampled token per row of ``logits`` (``[len(requests), vocab]``), and the
        rows' logprobs when any request asked for them."""
        logits = logits.float()
        greedy = logits.argmax(dim=-1)
        if all(r.params.greedy for r in requests):
            tokens = greedy
        else:
            tokens = torch.where(self._is_greedy(requests), greedy, self._sample(logits, requests))
        return tokens.tolist(), self._logprobs(logits, tokens, requests)

    def _is_greedy(self, requests: list[ScheduledRequest]) -> torch.Tensor:
        return torch.tensor([r.params.greedy for r in requests], device=self.device)

    def _sample(self, logits: torch.Tensor, requests: list[ScheduledRequest]) -> torch.Tensor:
        temperature = torch.tensor(
            [r.params.temperature or 1.0 for r in requests], device=self.device
        )
        logits = self._filter(logits / temperature[:, None], requests)
        probs = logits.softmax(dim=-1)
        q = torch.empty_like(probs).exponential_(generator=self.generator)
        for i, r in enumerate(requests):
            if r.params.seed is not None:
                # Drawn on the host: a device's generator has its own stream, and a
                # seeded request must sample the same tokens on every platform.
                own = torch.Generator().manual_seed((r.params.seed * 1_000_003 + r.num_output_tokens) % 2**63)
                q[i] = torch.empty(q.shape[1]).exponential_(generator=own)
        return (probs / q).argmax(dim=-1)

    def _filter(self, logits: torch.Tensor, requests: list[ScheduledRequest]) -> torch.Tensor:
        """Keep each row's top-k tokens, then its smallest top-p nucleus."""
        vocab = logits.shape[-1]
        top_k = [r.params.top_k if r.params.top_k > 0 else vocab for r in requests]
        top_p = [r.params.top_p for r in requests]
        if min(top_k) >= vocab and min(top_p) >= 1.0:
            return logits
        sorted_logits, order = logits.sort(dim=-1, descending=True)
        rank = torch.arange(vocab, device=self.device)
        drop = rank[None, :] >= torch.tensor(top_k, device=self.device)[:, None]
        sorted_probs = sorted_logits.masked_fill(drop, float("-inf")).softmax(dim=-1)
        # Drop a token when the more likely ones already reach top_p (the first stays).
        mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
        drop |= mass_before >= torch.tensor(top_p, device=self.device)[:, None]
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        return torch.empty_like(logits).scatter_(-1, order, sorted_logits)

    @staticmethod
    def _logprobs(logits, tokens, requests) -> list[dict[int, tuple[float, int]]] | None:
        wanted = [r.params.logprobs for r in requests]
        if all(n is None for n in wanted):
            return None
        logprobs = logits.log_softmax(dim=-1)
        chosen = logprobs.gather(-1, tokens[:, None])
        ranks = ((logprobs > chosen).sum(dim=-1) + 1).tolist()
        top_values, top_ids = logprobs.topk(max(n or 0 for n in wanted), dim=-1)
        top_values, top_ids = top_values.tolist(), top_ids.tolist()
        rows = []
        for i, (n, token, value) in enumerate(zip(wanted, tokens.tolist(), chosen[:, 0].tolist())):
            row = {t: (v, k + 1) for k, (t, v) in enumerate(zip(top_ids[i][: n or 0], top_values[i]))}
            row[token] = (value, ranks[i])
            rows.append(row)
        return rows
