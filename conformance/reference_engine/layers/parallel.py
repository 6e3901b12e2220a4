"""This rank's place in the tensor-parallel group, as the layers see it."""

from __future__ import annotations

import dataclasses

from conformance.contract.communicator import DeviceCommunicatorBase


@dataclasses.dataclass(frozen=True)
class TensorParallel:
    """Rank ``rank`` of ``size``; ``communicator`` joins partial results (None when
    ``size`` is 1, where there is nothing to join)."""

    rank: int = 0
    size: int = 1
    communicator: DeviceCommunicatorBase | None = None

    def shard(self, total: int, what: str) -> int:
        """This rank's share of ``total`` units of ``what`` (heads, rows, ...)."""
        if total % self.size:
            raise ValueError(f"{what} ({total}) is not divisible by tensor_parallel_size {self.size}")
        return total // self.size

    def all_reduce(self, x):
        return x if self.size == 1 else self.communicator.all_reduce(x)

    def all_gather(self, x, dim: int = -1):
        return x if self.size == 1 else self.communicator.all_gather(x, dim)
