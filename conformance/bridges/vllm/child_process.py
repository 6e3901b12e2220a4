"""One spawned process that runs the bridge's vLLM calls, and never outlives a stop.

vLLM keeps process-wide state and rewrites the process environment, so the bridge
builds configs and runs engines in spawned processes. ``concurrent.futures``' pool
was the obvious tool, but it cannot stop a call in progress: interrupted by a test's
timeout while an engine was starting, its ``shutdown`` waited for the start to end
(minutes, under load), the watchdog's grace ran out, and the run ended with no word
and the engine's process orphaned. Here a call that is interrupted (a timeout, Ctrl-C)
kills the process at once, and the interruption goes on to end the test as it should;
a process whose parent dies is killed by the kernel (``PR_SET_PDEATHSIG``), so SIGTERM
on a run leaves no engine behind.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util
import os
import pickle
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from conformance.process_lifetime import die_with_parent

#: How long a process told to stop gets before it is killed.
_STOP_GRACE_S = 10.0


class ChildCallTimeout(TimeoutError):
    """The call did not return within its ``timeout``; the child was killed."""


class ChildCallError(RuntimeError):
    """The call raised in the child with an exception that does not pickle; its
    traceback is the message."""


def _serve(connection, environment: dict[str, str]) -> None:
    if not die_with_parent():
        return
    # Before anything here imports vLLM, which reads its settings at import.
    os.environ.update(environment)
    while (call := connection.recv()) is not None:
        function, args = call
        try:
            connection.send((True, function(*args)))
        except BaseException as exc:
            try:
                connection.send((False, pickle.dumps(exc)))
            except Exception:  # an exception that does not pickle
                connection.send((False, pickle.dumps(ChildCallError(traceback.format_exc()))))


class ChildProcess:
    """A spawned process with ``environment`` set, running ``call(function, *args)``
    (module-level functions, so the child imports them) one at a time."""

    def __init__(self, name: str, environment: dict[str, str] | None = None) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, child_end = context.Pipe()
        # Not a daemon: vLLM's engine starts processes of its own (a tensor-parallel
        # executor's workers), which a daemonic process may not.
        self._process = context.Process(target=_serve, args=(child_end, dict(environment or {})),
                                        name=name)
        self._process.start()
        child_end.close()
        self._finalizer = weakref.finalize(self, _stop, self._process, self._connection)
        # Stopped by _stop_at_exit instead, before multiprocessing joins every
        # non-daemonic child at exit (it would wait forever on one that waits for calls).
        self._finalizer.atexit = False
        _LIVE.add(self)

    def call(self, function: Callable[..., Any], *args: Any, timeout: float | None = None) -> Any:
        """``function(*args)`` in the child: what it returns, or what it raised, raised
        here. Interrupted, or past ``timeout`` seconds (``ChildCallTimeout``), the child
        is killed: it may be anywhere in the call."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self._connection.send((function, args))
            while not self._connection.poll(0.5):  # a wait that a signal can interrupt
                if deadline is not None and time.monotonic() >= deadline:
                    raise ChildCallTimeout(f"{function.__name__} did not return within {timeout:g} s")
                if not self._process.is_alive():
                    raise ChildCallError(
                        f"the {self._process.name} process died (exit code "
                        f"{self._process.exitcode}) during {function.__name__}")
            returned, value = self._connection.recv()
        except BaseException:
            self.kill()
            raise
        if returned:
            return value
        raise pickle.loads(value)

    def kill(self) -> None:
        self._finalizer.detach()
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._connection.close()

    def stop(self) -> None:
        """Tell the child to end; kill it if it has not within a few seconds.
        Idempotent; also done when the object is collected, or at exit."""
        self._finalizer()


_LIVE: weakref.WeakSet[ChildProcess] = weakref.WeakSet()


@atexit.register  # after multiprocessing.util's (imported above): atexit runs it first
def _stop_at_exit() -> None:
    for child in list(_LIVE):
        child.stop()


def _stop(process, connection) -> None:
    try:
        connection.send(None)
    except OSError:
        pass  # already gone
    process.join(_STOP_GRACE_S)
    if process.is_alive():
        process.kill()
        process.join()
    connection.close()
