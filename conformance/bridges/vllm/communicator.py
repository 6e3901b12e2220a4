"""vLLM's device communicator under the kit's ``DeviceCommunicatorBase`` contract.

Built the way vLLM's ``GroupCoordinator`` builds it: the class the platform names,
given a CPU (gloo) group, the device, the device group and a unique name (``tp:0``:
vLLM enables its CPU shared-memory path only for ``tp``/``pp`` groups). vLLM always
runs inside a process group, also for one rank, so a world of one gets a one-rank gloo
group here. vLLM's CPU worker names its shared-memory segments after
``VLLM_DIST_IDENT``, which it sets before building communicators; the kit's ranks
agree on one through the group instead. Every collective is vLLM's own; ``barrier`` is
not on vLLM's communicator, and is taken from the group as ``GroupCoordinator.barrier``
does. An exception from inside vLLM (its own ``assert``, say) is raised again naming
the kit's call: the collective, the tensor's shape and dtype, and the arguments.
"""

from __future__ import annotations

import os
import uuid

import torch
import torch.distributed as dist

from conformance.bridges.vllm.errors import named_class, plugin_label
from conformance.contract.communicator import DeviceCommunicatorBase


class VllmCollectiveError(AssertionError):
    """A collective raised inside vLLM: the kit's call, then vLLM's exception."""


class VllmCommunicator(DeviceCommunicatorBase):
    def __init__(self, device: torch.device, group: dist.ProcessGroup | None = None) -> None:
        from vllm.platforms import current_platform

        self._owns_world = not dist.is_initialized()
        if self._owns_world:
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        super().__init__(device, group)
        cpu_group = group or dist.group.WORLD
        ranks = dist.get_process_group_ranks(cpu_group)
        device_group = (cpu_group if current_platform.dist_backend == "gloo"
                        else dist.new_group(ranks, backend=current_platform.dist_backend))
        _agree_on_dist_ident(cpu_group)
        vllm_class = vllm_communicator_class(current_platform.get_device_communicator_cls())
        self.vllm = vllm_class(cpu_group=cpu_group, device=device, device_group=device_group,
                               unique_name="tp:0")
        self.cpu_group = cpu_group

    def _vllm_call(self, method: str, tensor: torch.Tensor | None, *args, **shown):
        """vLLM's ``method``; an exception from inside vLLM is raised again with the
        kit's call beside it (collective, shape, dtype, arguments), vLLM's own
        exception and traceback chained under it."""
        try:
            return getattr(self.vllm, method)(*(() if tensor is None else (tensor,)), *args)
        except Exception as exc:
            described = [] if tensor is None else [f"a {tuple(tensor.shape)} {tensor.dtype} tensor"]
            described += [f"{name}={value!r}" for name, value in shown.items()]
            owner = type(self.vllm)
            raised = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise VllmCollectiveError(
                f"{owner.__module__}.{owner.__qualname__}.{method}({', '.join(described)}) on rank "
                f"{dist.get_rank(self.cpu_group)} of {dist.get_world_size(self.cpu_group)} raised "
                f"{raised}") from exc

    def all_reduce(self, tensor):
        return self._vllm_call("all_reduce", tensor)

    def all_gather(self, tensor, dim=-1):
        return self._vllm_call("all_gather", tensor, dim, dim=dim)

    def reduce_scatter(self, tensor, dim=-1):
        return self._vllm_call("reduce_scatter", tensor, dim, dim=dim)

    def gather(self, tensor, dst=0, dim=-1):
        return self._vllm_call("gather", tensor, dst, dim, dst=dst, dim=dim)

    def broadcast(self, tensor, src=0):
        return self._vllm_call("broadcast", tensor, src, src=src)

    def send(self, tensor, dst=None):
        self._vllm_call("send", tensor, dst, dst=dst)

    def recv(self, size, dtype, src=None):
        return self._vllm_call("recv", None, size, dtype, src, size=tuple(size), dtype=dtype, src=src)

    def barrier(self) -> None:
        dist.barrier(group=self.cpu_group)

    @property
    def collectives_path(self) -> str:
        """What vLLM's communicator runs its collectives through: ``torch.distributed``,
        or the name of the module of vLLM's it chose instead (on CPU, its shared-memory
        collectives, where vLLM's build for this host has them). A finding about one
        path need not hold on the other."""
        module = getattr(self.vllm, "dist_module", dist)
        return "torch.distributed" if module is dist else type(module).__name__

    def destroy(self) -> None:
        self.vllm.destroy()
        if self._owns_world:
            dist.destroy_process_group()


def collectives_path() -> str:
    """``VllmCommunicator.collectives_path`` of a one-rank communicator built here: the
    path vLLM takes on this host (it chooses by host and group name, not world size)."""
    communicator = VllmCommunicator(torch.device("cpu"))
    try:
        return communicator.collectives_path
    finally:
        communicator.destroy()


def vllm_communicator_class(qualname: str) -> type:
    """vLLM's communicator class ``qualname``, imported as vLLM's ``GroupCoordinator``
    imports it."""
    from vllm.distributed.device_communicators.base_device_communicator import (
        DeviceCommunicatorBase as VllmCommunicatorBase,
    )

    return named_class(qualname, VllmCommunicatorBase,
                       f"vLLM platform plugin {plugin_label()}: get_device_communicator_cls names")


def _agree_on_dist_ident(group: dist.ProcessGroup) -> None:
    """Give every rank of ``group`` rank 0's ``VLLM_DIST_IDENT`` (a fresh one unless
    set), as vLLM's CPU worker gives every rank the one derived from its init method."""
    ident = [os.environ.get("VLLM_DIST_IDENT") or f"conformance-{uuid.uuid4().hex[:12]}"]
    dist.broadcast_object_list(ident, src=dist.get_global_rank(group, 0), group=group)
    os.environ["VLLM_DIST_IDENT"] = ident[0]
