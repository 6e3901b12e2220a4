"""vLLM's device communicator under the kit's ``DeviceCommunicatorBase`` contract.

Built the way vLLM's ``GroupCoordinator`` builds it: the class the platform names,
given a CPU (gloo) group, the device, the device group and a unique name (``tp:0``:
vLLM enables its CPU shared-memory path only for ``tp``/``pp`` groups). vLLM always
runs inside a process group, also for one rank, so a world of one gets a one-rank gloo
group here. vLLM's CPU worker names its shared-memory segments after
``VLLM_DIST_IDENT``, which it sets before building communicators; the kit's ranks
agree on one through the group instead. Every collective is vLLM's own; ``barrier`` is not on vLLM's communicator,
and is taken from the group as ``GroupCoordinator.barrier`` does.
"""

from __future__ import annotations

import os
import pkgutil
import uuid

import torch
import torch.distributed as dist

from conformance.contract.communicator import DeviceCommunicatorBase


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
        vllm_class = pkgutil.resolve_name(current_platform.get_device_communicator_cls())
        self.vllm = vllm_class(cpu_group=cpu_group, device=device, device_group=device_group,
                               unique_name="tp:0")
        self.cpu_group = cpu_group

    def all_reduce(self, tensor):
        return self.vllm.all_reduce(tensor)

    def all_gather(self, tensor, dim=-1):
        return self.vllm.all_gather(tensor, dim)

    def reduce_scatter(self, tensor, dim=-1):
        return self.vllm.reduce_scatter(tensor, dim)

    def gather(self, tensor, dst=0, dim=-1):
        return self.vllm.gather(tensor, dst, dim)

    def broadcast(self, tensor, src=0):
        return self.vllm.broadcast(tensor, src)

    def send(self, tensor, dst=None):
        self.vllm.send(tensor, dst)

    def recv(self, size, dtype, src=None):
        return self.vllm.recv(size, dtype, src)

    def barrier(self) -> None:
        dist.barrier(group=self.cpu_group)

    def destroy(self) -> None:
        self.vllm.destroy()
        if self._owns_world:
            dist.destroy_process_group()


def _agree_on_dist_ident(group: dist.ProcessGroup) -> None:
    """Give every rank of ``group`` rank 0's ``VLLM_DIST_IDENT`` (a fresh one unless
    set), as vLLM's CPU worker gives every rank the one derived from its init method."""
    ident = [os.environ.get("VLLM_DIST_IDENT") or f"conformance-{uuid.uuid4().hex[:12]}"]
    dist.broadcast_object_list(ident, src=dist.get_global_rank(group, 0), group=group)
    os.environ["VLLM_DIST_IDENT"] = ident[0]
