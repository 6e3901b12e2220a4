"""Linear layers split across tensor-parallel ranks (vLLM's names and split rules).

``linear`` is the platform's kernel for ``x @ W^T`` (None: ``F.linear``). Every
parameter carries a ``weight_loader(param, full_weight, shard_id=None)`` that
takes the *unsplit* checkpoint tensor and copies this rank's part, so the loader never
needs to know how a layer is split.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from conformance.reference_engine.layers.parallel import TensorParallel


class ColumnParallelLinear(nn.Module):
    """``y = x W^T`` with W's output rows split across ranks; each rank keeps its slice
    of ``y`` (the next row-parallel layer consumes it without a collective)."""

    def __init__(
        self, input_size: int, output_size: int, tp: TensorParallel, linear: Callable | None = None
    ) -> None:
        super().__init__()
        self.tp = tp
        self.output_size = tp.shard(output_size, "linear output size")
        self.weight = nn.Parameter(torch.empty(self.output_size, input_size), requires_grad=False)
        self.weight.weight_loader = self.weight_loader
        self.linear = linear or F.linear

    def weight_loader(self, param: nn.Parameter, full: torch.Tensor, shard_id=None) -> None:
        param.data.copy_(full.narrow(0, self.tp.rank * self.output_size, self.output_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x, self.weight)


class MergedColumnParallelLinear(ColumnParallelLinear):
    """Several column-parallel projections of the same input in one matmul (gate and
    up); each checkpoint tensor is split on its own, so rank r holds part r of each."""

    def __init__(
        self, input_size: int, output_sizes: list[int], tp: TensorParallel,
        linear: Callable | None = None,
    ) -> None:
        super().__init__(input_size, sum(output_sizes), tp, linear)
        self.local_sizes = [tp.shard(n, "linear output size") for n in output_sizes]

    def weight_loader(self, param: nn.Parameter, full: torch.Tensor, shard_id: int = 0) -> None:
        size = self.local_sizes[shard_id]
        offset = sum(self.local_sizes[:shard_id])
        param.data.narrow(0, offset, size).copy_(full.narrow(0, self.tp.rank * size, size))


class QKVParallelLinear(MergedColumnParallelLinear):
    """Query, key and value projections in one matmul, split by heads (GQA: each rank
    keeps whole KV heads)."""

    SHARDS = ("q", "k", "v")

    def __init__(
        self, hidden_size: int, head_size: int, num_heads: int, num_kv_heads: int,
        tp: TensorParallel, linear: Callable | None = None,
    ) -> None:
        tp.shard(num_kv_heads, "num_key_value_heads")
        sizes = [num_heads * head_size, num_kv_heads * head_size, num_kv_heads * head_size]
        super().__init__(hidden_size, sizes, tp, linear)

    def weight_loader(self, param: nn.Parameter, full: torch.Tensor, shard_id: str = "q") -> None:
        super().weight_loader(param, full, self.SHARDS.index(shard_id))


class RowParallelLinear(nn.Module):
    """``y = x W^T`` with W's input columns split across ranks: each rank multiplies its
    slice of ``x`` and the partial sums are all-reduced."""

    def __init__(
        self, input_size: int, output_size: int, tp: TensorParallel, linear: Callable | None = None
    ) -> None:
        super().__init__()
        self.tp = tp
        self.input_size = tp.shard(input_size, "linear input size")
        self.weight = nn.Parameter(torch.empty(output_size, self.input_size), requires_grad=False)
        self.weight.weight_loader = self.weight_loader
        self.linear = linear or F.linear

    def weight_loader(self, param: nn.Parameter, full: torch.Tensor, shard_id=None) -> None:
        param.data.copy_(full.narrow(1, self.tp.rank * self.input_size, self.input_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tp.all_reduce(self.linear(x, self.weight))
