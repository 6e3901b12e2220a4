"""Rank processes for suites that need more than one rank.

A ``RankPool`` starts ``world_size`` processes once, each on the platform under test
with ``torch.distributed`` initialised on the platform's ``dist_backend`` and the
platform's communicator built, then runs many check functions on all of them and
returns the per-rank results. It is the engine's ``RankProcesses`` with the suites'
outcomes: what a plugin does to a rank process becomes

- a rank that does not answer within ``timeout`` seconds -> ``timed_out``;
- a rank process that dies -> ``crashed``;
- a rank that raises -> ``failed``, with that rank's traceback.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import pkgutil
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from conformance.contract.communicator import DeviceCommunicatorBase
from conformance.contract.platform import Platform
from conformance.reference_engine.distributed import rank_processes
from conformance.results.outcomes import Crashed, TimedOut


class RankTimeout(TimedOut):
    pass


class RankCrashed(Crashed):
    pass


class RankError(AssertionError):
    """A check raised on a rank (its traceback is the message)."""


def ranks_on(platform: type[Platform], world_size: int) -> str | None:
    """Why ``world_size`` ranks cannot run here, or None if they can.

    Gloo ranks may share one device; other backends need a device per rank.
    """
    if world_size > platform.capabilities.max_world_size:
        return f"declared max world size is {platform.capabilities.max_world_size}"
    if platform.dist_backend != "gloo" and world_size > platform.device_count():
        return f"only {platform.device_count()} {platform.device_type} devices here"
    return None


def build_communicator(rank: int, world_size: int, init_method: str,
                       platform: type[Platform]) -> DeviceCommunicatorBase:
    """A rank's setup: its device, the process group, and the platform's communicator."""
    # Ranks share the host's cores; more threads than cores makes collectives that
    # spin-wait (gloo) crawl.
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // world_size))
    device = torch.device(platform.device_type, rank % platform.device_count())
    platform.set_device(device)
    if world_size > 1:
        dist.init_process_group(
            platform.dist_backend, init_method=init_method, rank=rank,
            world_size=world_size, timeout=datetime.timedelta(hours=1),
        )
    return pkgutil.resolve_name(platform.get_device_communicator_cls())(device)


def _shut_down(communicator: DeviceCommunicatorBase) -> None:
    communicator.destroy()
    if dist.is_initialized():
        dist.destroy_process_group()


class RankPool:
    """``world_size`` rank processes of ``platform`` running checks of the form
    ``check(communicator, *args) -> result`` (module-level functions, so the rank
    processes can import them)."""

    def __init__(self, platform: type[Platform], world_size: int, timeout: float) -> None:
        self.world_size = world_size
        # Ranks fork from a server that has imported torch once: each is a fresh,
        # single-threaded process like a spawned one (no device was initialised
        # there), without paying torch's import for every rank and every restart.
        self._ranks = rank_processes.RankProcesses(
            world_size, build_communicator, (platform,), timeout=timeout,
            context="forkserver", preload=("torch", "torch.distributed", __name__),
            name="conformance-rank",
        )

    def run(self, check: Callable[..., Any], *args: Any) -> list[Any]:
        """Run ``check`` on every rank; its results in rank order."""
        try:
            return self._ranks.call(check, *args)
        except rank_processes.RankTimeout as exc:
            raise RankTimeout(str(exc)) from None
        except rank_processes.RankCrashed as exc:
            raise RankCrashed(str(exc)) from None
        except rank_processes.RankError as exc:
            raise RankError(str(exc)) from None

    def close(self) -> None:
        """Stop every rank; kill those that do not stop."""
        if self._ranks.running:
            with contextlib.suppress(rank_processes.RankTimeout, rank_processes.RankCrashed,
                                     rank_processes.RankError):
                self._ranks.call(_shut_down)  # killed below if it fails
        self._ranks.close()
