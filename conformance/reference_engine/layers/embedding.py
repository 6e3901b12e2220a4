"""Token embedding and LM head, split across tensor-parallel ranks by vocabulary."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from conformance.reference_engine.layers.parallel import TensorParallel


class VocabParallelEmbedding(nn.Module):
    """Rank r holds rows ``[r*V/n, (r+1)*V/n)``; ids outside them embed to zero, and
    the all-reduce sums in the one rank that owns each id."""

    def __init__(self, vocab_size: int, hidden_size: int, tp: TensorParallel) -> None:
        super().__init__()
        self.tp = tp
        self.shard_size = tp.shard(vocab_size, "vocab_size")
        self.start = tp.rank * self.shard_size
        self.weight = nn.Parameter(torch.empty(self.shard_size, hidden_size), requires_grad=False)
        self.weight.weight_loader = self.weight_loader

    def weight_loader(self, param: nn.Parameter, full: torch.Tensor, shard_id=None) -> None:
        param.data.copy_(full.narrow(0, self.start, self.shard_size))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.tp.size == 1:
            return F.embedding(input_ids, self.weight)
        local = input_ids - self.start
        mine = (local >= 0) & (local < self.shard_size)
        x = F.embedding(local.clamp(0, self.shard_size - 1), self.weight) * mine.unsqueeze(-1)
        return self.tp.all_reduce(x)


class ParallelLMHead(VocabParallelEmbedding):
    """Logits over this rank's vocabulary slice, gathered into the full vocabulary."""

    def __init__(
        self, vocab_size: int, hidden_size: int, tp: TensorParallel, linear: Callable | None = None
    ) -> None:
        super().__init__(vocab_size, hidden_size, tp)
        self.linear = linear or F.linear

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.tp.all_gather(self.linear(hidden_states, self.weight), dim=-1)
