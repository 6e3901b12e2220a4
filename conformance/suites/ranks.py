"""Rank processes for suites that need more than one rank.

A ``RankPool`` starts ``world_size`` processes once, each on the platform under test
with ``torch.distributed`` initialised on the platform's ``dist_backend`` and the
platform's communicator built, then runs many check functions on all of them and
returns the per-rank results. What a plugin can do to a process becomes an outcome:

- a rank that does not answer within ``timeout`` seconds -> ``RankTimeout``
  (``timed_out``); the pool is killed and started afresh for the next check;
- a rank process that dies -> ``RankCrashed`` (``crashed``), likewise;
- a rank that raises -> ``RankError`` (``failed``), with that rank's traceback.

No rank outlives its parent: ranks are killed with the pool, and the kernel kills
them if the parent dies first (``PR_SET_PDEATHSIG`` on Linux).
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from conformance.reference_engine.platforms import Platform, get_current_platform
from conformance.reference_engine.platforms.discovery import import_qualname
from conformance.results.outcomes import Crashed, TimedOut

_PR_SET_PDEATHSIG = 1
#: Starting ranks imports torch and the plugin and joins a process group: on a busy
#: machine that alone can take longer than a collective's timeout.
_STARTUP_TIMEOUT_S = 120.0
#: After one rank raised, how long the others get to finish before the pool is
#: recycled: they may be stuck in a collective waiting for the rank that raised.
_GRACE_AFTER_ERROR_S = 5.0


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


def _die_with_parent() -> None:
    # The kernel kills a rank when the process that forked it (the fork server)
    # exits, and the fork server exits with the session's process.
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    parent = multiprocessing.parent_process()
    if parent is not None and not parent.is_alive():
        sys.exit(1)  # the parent died before the death signal was armed


def _rank_main(rank: int, world_size: int, init_method: str, connection) -> None:
    _die_with_parent()
    # Ranks share the host's cores; more threads than cores makes collectives that
    # spin-wait (gloo) crawl.
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // world_size))
    try:
        platform = get_current_platform()  # inherited through CONFORMANCE_PLATFORM
        device = torch.device(platform.device_type, rank % platform.device_count())
        platform.set_device(device)
        if world_size > 1:
            dist.init_process_group(
                platform.dist_backend, init_method=init_method, rank=rank,
                world_size=world_size, timeout=datetime.timedelta(hours=1),
            )
        communicator = import_qualname(platform.get_device_communicator_cls())(device)
    except BaseException:
        connection.send(("error", traceback.format_exc()))
        return
    connection.send(("ok", None))
    while (message := connection.recv()) is not None:
        check, args = message
        try:
            connection.send(("ok", check(communicator, *args)))
        except BaseException:
            connection.send(("error", traceback.format_exc()))
    communicator.destroy()
    if world_size > 1:
        dist.destroy_process_group()


def _rank_context():
    """Ranks start from a fork server that has imported torch once: each rank is
    a fresh, single-threaded process like a spawned one (no device was initialised
    there), without paying torch's import for every rank and every restart."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch.distributed", __name__])
    return context


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RankPool:
    """``world_size`` rank processes running checks of the form
    ``check(communicator, *args) -> result`` (module-level functions, so the spawned
    processes can import them)."""

    def __init__(self, world_size: int, timeout: float) -> None:
        self.world_size = world_size
        self.timeout = timeout
        self._processes: list[multiprocessing.Process] = []
        self._connections: list = []

    def run(self, check: Callable[..., Any], *args: Any) -> list[Any]:
        """Run ``check`` on every rank; its results in rank order."""
        if not self._processes:
            self._start()
        for rank, connection in enumerate(self._connections):
            try:
                connection.send((check, args))
            except OSError:  # the rank died since the last check
                self._raise_crashed(rank, check.__name__)
        try:
            return self._collect(check.__name__, self.timeout)
        except BaseException:
            # Interrupted (a test timeout, Ctrl-C): replies may still be in flight,
            # so this pool cannot be trusted any more; the next check starts afresh.
            self._kill()
            raise

    def close(self) -> None:
        """Stop every rank; kill those that do not stop."""
        for connection in self._connections:
            with contextlib.suppress(OSError):
                connection.send(None)
        deadline = time.monotonic() + 5
        for process in self._processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
        self._kill()

    def _start(self) -> None:
        context = _rank_context()
        init_method = f"tcp://127.0.0.1:{_free_port()}"
        for rank in range(self.world_size):
            parent_end, child_end = context.Pipe()
            process = context.Process(
                target=_rank_main,
                args=(rank, self.world_size, init_method, child_end),
                name=f"conformance-rank-{rank}",
                daemon=True,
            )
            process.start()
            child_end.close()
            self._processes.append(process)
            self._connections.append(parent_end)
        self._collect("starting the ranks (platform, process group, communicator)",
                      max(self.timeout, _STARTUP_TIMEOUT_S))

    def _collect(self, what: str, timeout: float) -> list[Any]:
        results: dict[int, Any] = {}
        deadline = time.monotonic() + timeout
        failure: str | None = None
        while len(results) < self.world_size:
            waiting = {
                rank: connection for rank, connection in enumerate(self._connections)
                if rank not in results
            }
            sentinels = {self._processes[rank].sentinel: rank for rank in waiting}
            ready = multiprocessing.connection.wait(
                [*waiting.values(), *sentinels], timeout=max(0.0, deadline - time.monotonic())
            )
            if not ready:
                self._kill()
                if failure is not None:
                    raise RankError(failure)
                missing = sorted(waiting)
                raise RankTimeout(
                    f"ranks {missing} of {self.world_size} did not finish {what} within "
                    f"{timeout:g} s; the rank processes were killed"
                )
            for rank, connection in waiting.items():
                if connection in ready:
                    try:
                        status, value = connection.recv()
                    except (EOFError, OSError):  # closed: the rank is gone
                        self._raise_crashed(rank, what)
                    results[rank] = value
                    if status == "error" and failure is None:
                        failure = f"rank {rank} raised during {what}:\n{value}"
                        deadline = min(deadline, time.monotonic() + _GRACE_AFTER_ERROR_S)
            for sentinel, rank in sentinels.items():
                if sentinel in ready and rank not in results:
                    self._raise_crashed(rank, what)
        if failure is not None:
            raise RankError(failure)
        return [results[rank] for rank in range(self.world_size)]

    def _raise_crashed(self, rank: int, what: str) -> None:
        process = self._processes[rank]
        process.join(timeout=1)
        exitcode = process.exitcode
        self._kill()
        raise RankCrashed(
            f"rank {rank} of {self.world_size} died during {what} (exit code {exitcode})"
        )

    def _kill(self) -> None:
        for process in self._processes:
            if process.is_alive():
                process.kill()
            process.join()
        for connection in self._connections:
            connection.close()
        self._processes, self._connections = [], []

