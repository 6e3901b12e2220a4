"""``Scheduler``: continuous batching under a token budget (vLLM v1's policy).

Every step, running sequences are served first in arrival order, then waiting ones,
each getting ``min(tokens it has not computed, budget left)`` tokens: a decode takes
one, a prompt as much as fits (the rest of it, a *chunk*, goes in later steps), so
prefill and decode mix in one batch. When the cache has no block for a running
sequence, the most recently admitted one is preempted: its blocks are freed and it
goes back to the front of the waiting queue to be recomputed from scratch (prompt
plus what it has generated), which changes nothing it will output.
"""

from __future__ import annotations

from collections import deque

from conformance.contract.worker import (
    ModelRunnerOutput,
    ScheduledRequest,
    SchedulerOutput,
)
from conformance.reference_engine.engine.block_manager import BlockManager
from conformance.reference_engine.engine.sequence import Sequence, SequenceStatus


class Scheduler:
    def __init__(
        self,
        block_manager: BlockManager,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        max_model_len: int,
        eos_token_ids: frozenset[int],
    ) -> None:
        self.block_manager = block_manager
        self.max_model_len = max_model_len
        self.eos_token_ids = eos_token_ids
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> tuple[list[tuple[Sequence, int]], SchedulerOutput]:
        budget = self.max_num_batched_tokens
        scheduled: list[tuple[Sequence, int]] = []
        preempted = False
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed_tokens, budget)
            while not self.block_manager.can_append(seq, n):
                victim = self.running.pop()
                self._preempt(victim)
                preempted = True
                if victim is seq:
                    break
            if seq.status is SequenceStatus.WAITING:
                break  # it preempted itself, the last one running
            self.block_manager.append(seq, n)
            scheduled.append((seq, n))
            budget -= n
            i += 1
        # Admitting new work right after preempting would only preempt again.
        while self.waiting and budget > 0 and not preempted and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed_tokens, budget)
            if not self.block_manager.can_append(seq, n):
                break
            self.waiting.popleft()
            self.block_manager.append(seq, n)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            scheduled.append((seq, n))
            budget -= n
        return scheduled, SchedulerOutput([self._describe(seq, n) for seq, n in scheduled])

    def _describe(self, seq: Sequence, n: int) -> ScheduledRequest:
        start = seq.num_computed_tokens
        return ScheduledRequest(
            request_id=seq.request_id,
            token_ids=seq.token_ids[start : start + n],
            num_computed_tokens=start,
            block_table=list(seq.block_table),
            params=seq.params,
            num_output_tokens=seq.num_output_tokens,
            sample=start + n == seq.num_tokens,
        )

    def _preempt(self, seq: Sequence) -> None:
        self.block_manager.free(seq)
        seq.num_computed_tokens = 0
        seq.status = SequenceStatus.WAITING
        self.waiting.appendleft(seq)
        self.num_preemptions += 1

    def update(self, scheduled: list[tuple[Sequence, int]], output: ModelRunnerOutput) -> list[Sequence]:
        """Account for a finished step: advance, append sampled tokens, stop sequences.
        Returns the sequences that finished."""
        sampled = dict(zip(output.req_ids, range(len(output.req_ids))))
        finished = []
        for seq, n in scheduled:
            seq.num_computed_tokens += n
            if seq.request_id not in sampled:
                continue  # a prefill chunk short of the end
            i = sampled[seq.request_id]
            token = output.sampled_token_ids[i]
            seq.token_ids.append(token)
            if output.logprobs is not None and seq.params.logprobs is not None:
                seq.logprobs.append(output.logprobs[i])
            reason = self._finish_reason(seq, token)
            if reason:
                seq.status = SequenceStatus.FINISHED
                seq.finish_reason = reason
                self.block_manager.free(seq)
                self.running.remove(seq)
                finished.append(seq)
        return finished

    def _finish_reason(self, seq: Sequence, token: int) -> str | None:
        params = seq.params
        if token in params.stop_token_ids or (not params.ignore_eos and token in self.eos_token_ids):
            return "stop"
        if seq.num_output_tokens >= params.max_tokens or seq.num_tokens >= self.max_model_len:
            return "length"
        return None
