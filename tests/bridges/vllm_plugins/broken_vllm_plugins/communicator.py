"""A vendor's communicator whose ``all_gather`` concatenates along dim 0 and reshapes,
which is right only for dim 0."""

from __future__ import annotations

import torch
from vllm.distributed.device_communicators.cpu_communicator import CpuCommunicator


class AllGatherDimsCommunicator(CpuCommunicator):
    def all_gather(self, input_: torch.Tensor, dim: int = -1) -> torch.Tensor:
        dim %= input_.dim()
        gathered = super().all_gather(input_, 0)
        shape = list(input_.shape)
        shape[dim] *= self.world_size
        return gathered.reshape(shape)
