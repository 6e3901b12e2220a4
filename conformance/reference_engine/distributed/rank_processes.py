"""One process per rank, each holding one object and answering calls on it: the RPC
layer under the multi-process executor (the object is a worker) and the suites' rank
pools (a communicator).

``RankProcesses(world_size, setup, setup_args)`` starts the processes on first use;
in each, ``setup(rank, world_size, init_method, *setup_args)`` builds the rank's
object (``init_method`` is a free TCP rendezvous for ``torch.distributed``). Then
``call(function, *args)`` runs ``function`` on every rank's object - a string names
one of its methods, a callable receives it first - and returns the results in rank
order. What a rank can do to its process becomes an exception:

- a rank that does not answer within ``timeout`` seconds -> ``RankTimeout``; starting
  the ranks (each builds its object, importing torch and the plugin) is bounded by the
  start-up allowance instead, and not counted against the running test's deadline
  (``startup``);
- a rank process that dies -> ``RankCrashed``;
- a rank that raises -> ``RankError``, with that rank's traceback; the others get a
  few seconds to finish, since they may wait in a collective for the one that raised.

After a timeout or a crash, or a call interrupted from outside (a test's timeout,
Ctrl-C), the processes are killed, and the next call starts fresh ones. No rank
outlives its parent: the kernel kills it if the parent dies first
(``PR_SET_PDEATHSIG`` on Linux).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import socket
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from conformance.process_lifetime import die_with_parent
from conformance.reference_engine.distributed import startup

#: After one rank raised, how long the others get to finish.
_GRACE_AFTER_ERROR_S = 5.0

RankFunction = str | Callable[..., Any]


class RankTimeout(RuntimeError):
    """Some rank did not answer in time; the rank processes were killed."""


class RankCrashed(RuntimeError):
    """A rank process died; the rank processes were killed."""


class RankError(RuntimeError):
    """A rank raised (its traceback is the message)."""


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call_on(target: Any, function: RankFunction, args: tuple, kwargs: dict) -> Any:
    """``function`` on ``target``: a string names a method, a callable gets it first."""
    if isinstance(function, str):
        return getattr(target, function)(*args, **kwargs)
    return function(target, *args, **kwargs)


def _rank_main(rank: int, world_size: int, init_method: str, setup: Callable,
               setup_args: tuple, connection) -> None:
    if not die_with_parent():
        sys.exit(1)
    try:
        target = setup(rank, world_size, init_method, *setup_args)
    except BaseException:
        connection.send(("error", traceback.format_exc()))
        return
    connection.send(("ok", None))
    while (message := connection.recv()) is not None:
        try:
            connection.send(("ok", call_on(target, *message)))
        except BaseException:
            connection.send(("error", traceback.format_exc()))


def _name(function: RankFunction) -> str:
    return function if isinstance(function, str) else function.__name__


class RankProcesses:
    """``world_size`` processes, each holding what ``setup`` built for its rank.

    ``context`` is a ``multiprocessing`` start method: ``spawn`` (the default) starts
    each rank as a fresh interpreter; ``forkserver`` forks ranks from a server that
    imported ``preload`` once, which is as clean (that server initialised no device)
    and saves an import per rank and per restart. ``timeout`` (seconds, None for no
    limit) bounds every call; the start-up allowance (``startup``) bounds the start.
    """

    def __init__(
        self,
        world_size: int,
        setup: Callable[..., Any],
        setup_args: tuple = (),
        *,
        timeout: float | None = None,
        context: str = "spawn",
        preload: tuple[str, ...] = (),
        name: str = "rank",
    ) -> None:
        self.world_size = world_size
        self.timeout = timeout
        self._setup, self._setup_args = setup, setup_args
        self._context, self._preload, self._name = context, preload, name
        self._processes: list[multiprocessing.Process] = []
        self._connections: list = []

    @property
    def running(self) -> bool:
        return bool(self._processes)

    def start(self) -> None:
        """Start the ranks and wait until each has built its object: start-up, bounded
        by the start-up allowance and not counted against the test's deadline."""
        with startup.starting_processes() as allowance_s:
            started = time.monotonic()
            try:
                self._start_processes()  # a forkserver imports its preload here
                left = None if allowance_s is None else max(0.0, allowance_s - (time.monotonic() - started))
                self._collect(f"starting the ranks ({_name(self._setup)})", left,
                              startup_allowance_s=allowance_s)
            except BaseException:
                self.kill()  # failed or interrupted while starting: no rank survives
                raise

    def _start_processes(self) -> None:
        context = multiprocessing.get_context(self._context)
        if self._preload:
            context.set_forkserver_preload(list(self._preload))
        init_method = f"tcp://127.0.0.1:{free_port()}"
        for rank in range(self.world_size):
            parent_end, child_end = context.Pipe()
            process = context.Process(
                target=_rank_main,
                args=(rank, self.world_size, init_method, self._setup, self._setup_args, child_end),
                name=f"{self._name}-{rank}",
                daemon=True,
            )
            process.start()
            child_end.close()
            self._processes.append(process)
            self._connections.append(parent_end)

    def call(self, function: RankFunction, *args: Any, **kwargs: Any) -> list[Any]:
        """Run ``function`` on every rank's object; its results in rank order."""
        if not self._processes:
            self.start()
        for rank, connection in enumerate(self._connections):
            try:
                connection.send((function, args, kwargs))
            except OSError:  # the rank died since the last call
                self._raise_crashed(rank, _name(function))
        try:
            return self._collect(_name(function), self.timeout)
        except (RankError, RankTimeout, RankCrashed):
            raise
        except BaseException:
            # Interrupted: replies may still be in flight, so these processes cannot
            # be trusted any more; the next call starts afresh.
            self.kill()
            raise

    def close(self, grace_s: float = 5.0) -> None:
        """Tell every rank to stop; kill those still running after ``grace_s``."""
        for connection in self._connections:
            with contextlib.suppress(OSError):
                connection.send(None)
        deadline = time.monotonic() + grace_s
        for process in self._processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
        self.kill()

    def kill(self) -> None:
        for process in self._processes:
            if process.is_alive():
                process.kill()
            process.join()
        for connection in self._connections:
            connection.close()
        self._processes, self._connections = [], []

    def _collect(self, what: str, timeout: float | None,
                 startup_allowance_s: float | None = None) -> list[Any]:
        results: dict[int, Any] = {}
        deadline = None if timeout is None else time.monotonic() + timeout
        failure: str | None = None
        while len(results) < self.world_size:
            waiting = {
                rank: connection for rank, connection in enumerate(self._connections)
                if rank not in results
            }
            sentinels = {self._processes[rank].sentinel: rank for rank in waiting}
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = multiprocessing.connection.wait([*waiting.values(), *sentinels], timeout=left)
            if not ready:
                self.kill()
                if failure is not None:
                    raise RankError(failure)
                if startup_allowance_s is not None:
                    raise RankTimeout(startup.timed_out_message(
                        f"ranks {sorted(waiting)} of {self.world_size} ({_name(self._setup)})",
                        startup_allowance_s) + "; the rank processes were killed")
                raise RankTimeout(
                    f"ranks {sorted(waiting)} of {self.world_size} did not finish {what} "
                    f"within {timeout:g} s; the rank processes were killed"
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
                        grace_end = time.monotonic() + _GRACE_AFTER_ERROR_S
                        deadline = grace_end if deadline is None else min(deadline, grace_end)
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
        self.kill()
        raise RankCrashed(
            f"rank {rank} of {self.world_size} died during {what} (exit code {exitcode})"
        )
