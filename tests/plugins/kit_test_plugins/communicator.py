"""Plugins whose communicator breaks one collective each.

The communicators run in rank processes the Communicator suite spawns, which import
this module by name: keep them at module level.
"""

from __future__ import annotations

import functools
import os
import signal
import time

import torch
import torch.distributed as dist
from kit_test_plugins import platform_naming

from conformance.reference_engine.distributed.torch_communicator import TorchDistributedCommunicator

_platform = functools.partial(platform_naming, "get_device_communicator_cls", module=__name__)


class LocalAllReduce(TorchDistributedCommunicator):
    def all_reduce(self, tensor):
        result = tensor.clone()
        dist.all_reduce(result)
        return tensor  # the local input, not the sum


class ReplayedAllReduce(TorchDistributedCommunicator):
    """Captures its all_reduce per shape after a few warm-up calls and replays the
    capture without copying the new input in: from the sixth call of a shape on,
    every call returns the fifth call's sum."""

    WARMUP_CALLS = 4

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._calls, self._captured = {}, {}

    def all_reduce(self, tensor):
        key = (tuple(tensor.shape), tensor.dtype)
        self._calls[key] = self._calls.get(key, 0) + 1
        if key in self._captured:
            return self._captured[key].clone()
        result = super().all_reduce(tensor)
        if self._calls[key] > self.WARMUP_CALLS:
            self._captured[key] = result.clone()
        return result


class ReversedAllGather(TorchDistributedCommunicator):
    def all_gather(self, tensor, dim=-1):
        parts = super().all_gather(tensor, dim).chunk(self.world_size, dim)
        return torch.cat(parts[::-1], dim)


class FirstDimReduceScatter(TorchDistributedCommunicator):
    def reduce_scatter(self, tensor, dim=-1):
        return super().reduce_scatter(tensor, 0)


class EveryRankGather(TorchDistributedCommunicator):
    def gather(self, tensor, dst=0, dim=-1):
        return self.all_gather(tensor, dim)


class RankZeroBroadcast(TorchDistributedCommunicator):
    def broadcast(self, tensor, src=0):
        return super().broadcast(tensor, 0)


class NextRankSend(TorchDistributedCommunicator):
    def send(self, tensor, dst=None):
        super().send(tensor, None)  # always to the next rank

    def recv(self, size, dtype, src=None):
        return super().recv(size, dtype, None)  # always from the previous rank


class ReversedRing(TorchDistributedCommunicator):
    def send(self, tensor, dst=None):
        super().send(tensor, (self.rank - 1) % self.world_size if dst is None else dst)

    def recv(self, size, dtype, src=None):
        return super().recv(size, dtype, (self.rank + 1) % self.world_size if src is None else src)


class NonWaitingBarrier(TorchDistributedCommunicator):
    def barrier(self):
        pass


class HangingAllReduce(TorchDistributedCommunicator):
    def all_reduce(self, tensor):
        if self.rank == 1:
            time.sleep(3600)
        return super().all_reduce(tensor)


class CrashingGather(TorchDistributedCommunicator):
    def gather(self, tensor, dst=0, dim=-1):
        if self.rank == self.world_size - 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().gather(tensor, dst, dim)


LocalAllReducePlatform = _platform(LocalAllReduce)
ReplayedAllReducePlatform = _platform(ReplayedAllReduce)
ReversedAllGatherPlatform = _platform(ReversedAllGather)
FirstDimReduceScatterPlatform = _platform(FirstDimReduceScatter)
EveryRankGatherPlatform = _platform(EveryRankGather)
RankZeroBroadcastPlatform = _platform(RankZeroBroadcast)
NextRankSendPlatform = _platform(NextRankSend)
NonWaitingBarrierPlatform = _platform(NonWaitingBarrier)
ReversedRingPlatform = _platform(ReversedRing)
HangingAllReducePlatform = _platform(HangingAllReduce)
CrashingGatherPlatform = _platform(CrashingGather)
