"""Acme's collectives, over gloo (the emulator's interconnect is the host's)."""

from __future__ import annotations

import torch
import torch.distributed as dist

from conformance import DeviceCommunicatorBase


class AcmeGlooCommunicator(DeviceCommunicatorBase):
    def _global(self, rank: int) -> int:
        """A rank of the group as torch.distributed's point-to-point calls want it."""
        return rank if self.group is None else dist.get_global_rank(self.group, rank)

    def all_reduce(self, tensor: torch.Tensor) -> torch.Tensor:
        summed = tensor.clone()
        if self.world_size > 1:
            dist.all_reduce(summed, group=self.group)
        return summed

    def all_gather(self, tensor: torch.Tensor, dim: int = -1) -> torch.Tensor:
        if self.world_size == 1:
            return tensor
        tensor = tensor.contiguous()
        parts = [torch.empty_like(tensor) for _ in range(self.world_size)]
        dist.all_gather(parts, tensor, group=self.group)
        return torch.cat(parts, dim=dim)

    def reduce_scatter(self, tensor: torch.Tensor, dim: int = -1) -> torch.Tensor:
        if tensor.shape[dim] % self.world_size:
            raise ValueError(f"reduce_scatter: dim {dim} of size {tensor.shape[dim]} does not "
                             f"split into {self.world_size} equal chunks")
        # gloo has no reduce-scatter of its own: sum everywhere, keep this rank's chunk.
        return self.all_reduce(tensor).chunk(self.world_size, dim=dim)[self.rank].contiguous()

    def gather(self, tensor: torch.Tensor, dst: int = 0, dim: int = -1) -> torch.Tensor | None:
        if self.world_size == 1:
            return tensor
        tensor = tensor.contiguous()
        parts = [torch.empty_like(tensor) for _ in range(self.world_size)] if self.rank == dst else None
        dist.gather(tensor, parts, dst=self._global(dst), group=self.group)
        return torch.cat(parts, dim=dim) if parts is not None else None

    def broadcast(self, tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
        if self.world_size > 1:
            # gloo treats its buffer as contiguous memory: a strided view (an engine's
            # slice) would be written across its gaps, so go through a dense copy.
            staged = tensor.contiguous()  # the tensor itself when it is contiguous already
            dist.broadcast(staged, src=self._global(src), group=self.group)
            if staged is not tensor:
                tensor.copy_(staged)
        return tensor

    def send(self, tensor: torch.Tensor, dst: int | None = None) -> None:
        peer = (self.rank + 1) % self.world_size if dst is None else dst
        dist.send(tensor.contiguous(), dst=self._global(peer), group=self.group)

    def recv(self, size: torch.Size, dtype: torch.dtype, src: int | None = None) -> torch.Tensor:
        peer = (self.rank - 1) % self.world_size if src is None else src
        received = torch.empty(size, dtype=dtype, device=self.device)
        dist.recv(received, src=self._global(peer), group=self.group)
        return received

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier(group=self.group)
