"""The reference communicator: every collective through ``torch.distributed``."""

from __future__ import annotations

import torch
import torch.distributed as dist

from conformance.contract.communicator import DeviceCommunicatorBase

# torch 2.13 renamed the flat-tensor collectives; older releases only have the old names.
_all_gather_flat = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_reduce_scatter_flat = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


class TorchDistributedCommunicator(DeviceCommunicatorBase):
    """Every collective through ``torch.distributed``, on whatever backend the process
    group was initialised with: the built-in ``cpu`` platform uses it over gloo and
    ``cuda`` over NCCL.

    Gathers and scatters along any ``dim`` go through one flat tensor collective
    with ``dim`` moved to the front, so each is a single call on every backend.
    """

    def all_reduce(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.world_size > 1:
            # In place (the contract lets the input change): no copy on the hot path.
            # Gloo reads and writes a tensor's memory as if it were contiguous, so a
            # view with gaps is reduced in a contiguous copy.
            tensor = tensor.contiguous()
            dist.all_reduce(tensor, group=self.group)
        return tensor

    def all_gather(self, tensor: torch.Tensor, dim: int = -1) -> torch.Tensor:
        if self.world_size == 1:
            return tensor
        dim = dim % tensor.dim()
        front = tensor.movedim(dim, 0).contiguous()
        gathered = front.new_empty((self.world_size * front.shape[0], *front.shape[1:]))
        _all_gather_flat(gathered, front, group=self.group)
        return gathered.movedim(0, dim).contiguous()

    def reduce_scatter(self, tensor: torch.Tensor, dim: int = -1) -> torch.Tensor:
        if self.world_size == 1:
            return tensor
        dim = dim % tensor.dim()
        length = tensor.shape[dim]
        if length % self.world_size:
            raise ValueError(
                f"reduce_scatter: size {length} of dim {dim} is not divisible by "
                f"world size {self.world_size}"
            )
        front = tensor.movedim(dim, 0).contiguous()
        scattered = front.new_empty((length // self.world_size, *front.shape[1:]))
        _reduce_scatter_flat(scattered, front, group=self.group)
        return scattered.movedim(0, dim).contiguous()

    def gather(
        self, tensor: torch.Tensor, dst: int = 0, dim: int = -1
    ) -> torch.Tensor | None:
        if self.world_size == 1:
            return tensor
        tensor = tensor.contiguous()
        if self.rank != dst:
            dist.gather(tensor, None, group_dst=dst, group=self.group)
            return None
        parts = [torch.empty_like(tensor) for _ in range(self.world_size)]
        dist.gather(tensor, parts, group_dst=dst, group=self.group)
        return torch.cat(parts, dim=dim)

    def broadcast(self, tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
        if self.world_size > 1:
            # Gloo writes a tensor's memory as if it were contiguous: a view with gaps
            # receives in a contiguous copy, copied back into it.
            staged = tensor.contiguous()
            dist.broadcast(staged, group_src=src, group=self.group)
            if staged is not tensor:
                tensor.copy_(staged)
        return tensor

    def send(self, tensor: torch.Tensor, dst: int | None = None) -> None:
        dst = (self.rank + 1) % self.world_size if dst is None else dst
        dist.send(tensor.contiguous(), group_dst=dst, group=self.group)

    def recv(
        self, size: torch.Size, dtype: torch.dtype, src: int | None = None
    ) -> torch.Tensor:
        src = (self.rank - 1) % self.world_size if src is None else src
        tensor = torch.empty(size, dtype=dtype, device=self.device)
        dist.recv(tensor, group_src=src, group=self.group)
        return tensor

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier(group=self.group)
