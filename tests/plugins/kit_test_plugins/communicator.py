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


class StagingBufferAllGather(TorchDistributedCommunicator):
    """Copies all_gather's result into a staging buffer kept per shape and dtype (as a
    communicator with buffers registered with its transport does) and returns that
    buffer: the next call of the same shape overwrites what the last one returned."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._buffers = {}

    def _staged(self, collective: str, result):
        if result is None:
            return None
        key = (collective, tuple(result.shape), result.dtype)
        return self._buffers.setdefault(key, torch.empty_like(result)).copy_(result)

    def all_gather(self, tensor, dim=-1):
        return self._staged("all_gather", super().all_gather(tensor, dim))


class StagingBufferCollectives(StagingBufferAllGather):
    """The same staging buffers for every collective that returns a tensor; broadcast
    still writes into its argument, but returns the buffer."""

    def all_reduce(self, tensor):
        return self._staged("all_reduce", super().all_reduce(tensor))

    def reduce_scatter(self, tensor, dim=-1):
        return self._staged("reduce_scatter", super().reduce_scatter(tensor, dim))

    def gather(self, tensor, dst=0, dim=-1):
        return self._staged("gather", super().gather(tensor, dst, dim))

    def broadcast(self, tensor, src=0):
        return self._staged("broadcast", super().broadcast(tensor, src))

    def recv(self, size, dtype, src=None):
        return self._staged("recv", super().recv(size, dtype, src))


class ReplayedCollectives(TorchDistributedCommunicator):
    """Captures each call signature (collective, shape, dtype, peers, dim) after a few
    warm-up calls, as a graph-capturing communicator does, and replays the capture on
    its static input buffer without copying the new input in: from the sixth call of
    a signature on, every collective sends the fifth call's values again."""

    WARMUP_CALLS = 4

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._calls, self._static = {}, {}

    def _input(self, collective: str, tensor, *args):
        """What the collective runs on: the new input until it is captured, then the
        captured one."""
        key = (collective, tuple(tensor.shape), tensor.dtype, args)
        self._calls[key] = self._calls.get(key, 0) + 1
        if key in self._static:
            return self._static[key].clone()
        if self._calls[key] > self.WARMUP_CALLS:
            self._static[key] = tensor.clone()
        return tensor

    def all_reduce(self, tensor):
        return super().all_reduce(self._input("all_reduce", tensor))

    def all_gather(self, tensor, dim=-1):
        return super().all_gather(self._input("all_gather", tensor, dim), dim)

    def reduce_scatter(self, tensor, dim=-1):
        return super().reduce_scatter(self._input("reduce_scatter", tensor, dim), dim)

    def gather(self, tensor, dst=0, dim=-1):
        return super().gather(self._input("gather", tensor, dst, dim), dst, dim)

    def broadcast(self, tensor, src=0):
        return tensor.copy_(super().broadcast(self._input("broadcast", tensor, src), src))

    def send(self, tensor, dst=None):
        super().send(self._input("send", tensor, dst), dst)


def _as_if_contiguous(tensor):
    """``tensor``'s memory read as a transport handed ``data_ptr()`` and ``numel()``
    reads it: the first ``numel()`` elements from its start, in order, as if it were
    contiguous. The same tensor where it is; other elements where it is a view with
    gaps."""
    return torch.as_strided(tensor, (tensor.numel(),), (1,)).view(tensor.shape)


class ContiguousAssumingCollectives(TorchDistributedCommunicator):
    """Hands every collective's input to its transport as if contiguous (the flat
    buffer ``_as_if_contiguous`` makes): right on tensors of their own, wrong on a
    slice of a larger one."""

    def all_reduce(self, tensor):
        return super().all_reduce(_as_if_contiguous(tensor))

    def all_gather(self, tensor, dim=-1):
        return super().all_gather(_as_if_contiguous(tensor), dim)

    def reduce_scatter(self, tensor, dim=-1):
        return super().reduce_scatter(_as_if_contiguous(tensor), dim)

    def gather(self, tensor, dst=0, dim=-1):
        return super().gather(_as_if_contiguous(tensor), dst, dim)

    def broadcast(self, tensor, src=0):
        super().broadcast(_as_if_contiguous(tensor), src)
        return tensor

    def send(self, tensor, dst=None):
        super().send(_as_if_contiguous(tensor), dst)


class FirstDimReduceScatter(TorchDistributedCommunicator):
    def reduce_scatter(self, tensor, dim=-1):
        return super().reduce_scatter(tensor, 0)


class EveryRankGather(TorchDistributedCommunicator):
    def gather(self, tensor, dst=0, dim=-1):
        return self.all_gather(tensor, dim)


class RankZeroBroadcast(TorchDistributedCommunicator):
    def broadcast(self, tensor, src=0):
        return super().broadcast(tensor, 0)


class FirstDimDefaults(TorchDistributedCommunicator):
    """Gathers and scatters along dim 0 when ``dim`` is left out, as torch's flat
    collectives (``all_gather_into_tensor``, ``reduce_scatter_tensor``) do."""

    def all_gather(self, tensor, dim=0):
        return super().all_gather(tensor, dim)

    def reduce_scatter(self, tensor, dim=0):
        return super().reduce_scatter(tensor, dim)


class LastRankRoots(TorchDistributedCommunicator):
    """Without a root, gathers on and broadcasts from the last rank (where a transport
    whose ring ends there would collect)."""

    def gather(self, tensor, dst=None, dim=-1):
        return super().gather(tensor, self.world_size - 1 if dst is None else dst, dim)

    def broadcast(self, tensor, src=None):
        return super().broadcast(tensor, self.world_size - 1 if src is None else src)


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
ContiguousAssumingCollectivesPlatform = _platform(ContiguousAssumingCollectives)
StagingBufferAllGatherPlatform = _platform(StagingBufferAllGather)
StagingBufferCollectivesPlatform = _platform(StagingBufferCollectives)
ReplayedCollectivesPlatform = _platform(ReplayedCollectives)
EveryRankGatherPlatform = _platform(EveryRankGather)
RankZeroBroadcastPlatform = _platform(RankZeroBroadcast)
FirstDimDefaultsPlatform = _platform(FirstDimDefaults)
LastRankRootsPlatform = _platform(LastRankRoots)
NextRankSendPlatform = _platform(NextRankSend)
NonWaitingBarrierPlatform = _platform(NonWaitingBarrier)
ReversedRingPlatform = _platform(ReversedRing)
HangingAllReducePlatform = _platform(HangingAllReduce)
CrashingGatherPlatform = _platform(CrashingGather)
