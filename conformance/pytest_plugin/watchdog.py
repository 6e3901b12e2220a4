"""The per-test timeout: a hang in the plugin ends one test as ``timed_out``.

Each phase of a test (setup, call, teardown) gets ``--test-timeout`` seconds. When
they run out, a ``TestTimedOut`` is raised in the test's thread (SIGALRM), which
interrupts Python code and waits in sleeps, locks and I/O. A hang that never returns
to the interpreter (a spin in native code) cannot be interrupted: ``GRACE_S`` later
faulthandler dumps every thread's stack and ends the process; under a worker
(``conformance run``, or ``-n``) that test is then recorded as ``crashed``.

Starting processes (ranks, vLLM's engine) does not count: while a start-up runs
(``reference_engine.distributed.startup``) the phase's deadline is paused and the
start is bounded by ``--startup-timeout`` instead; the phase then gets the time it
had left.
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
import sys
import threading

import pytest

from conformance.reference_engine.distributed import startup
from conformance.results.outcomes import TimedOut

GRACE_S = 30.0


class TestTimedOut(TimedOut):
    __test__ = False  # an exception, not a test class


class _PhaseDeadline:
    """A phase's SIGALRM and faulthandler dump, which a start-up pauses (``startup``)."""

    def __init__(self) -> None:
        self._left: float | None = None

    def pause(self, allowance_s: float | None) -> None:
        left, _ = signal.setitimer(signal.ITIMER_REAL, 0)
        self._left = left if left > 0 else None
        faulthandler.cancel_dump_traceback_later()
        if allowance_s is not None:  # a start-up that hangs in native code still ends
            faulthandler.dump_traceback_later(allowance_s + GRACE_S, exit=True, file=sys.stderr)

    def resume(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        if self._left is not None:
            signal.setitimer(signal.ITIMER_REAL, self._left)
            faulthandler.dump_traceback_later(self._left + GRACE_S, exit=True, file=sys.stderr)
            self._left = None


@contextlib.contextmanager
def _deadline(seconds: float, what: str):
    can_alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if seconds <= 0 or not can_alarm:
        yield
        return

    def interrupt(signum, frame):
        raise TestTimedOut(f"{what} did not finish within --test-timeout={seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    faulthandler.dump_traceback_later(seconds + GRACE_S, exit=True, file=sys.stderr)
    try:
        with startup.deadline_registered(_PhaseDeadline()):
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


class Watchdog:
    def __init__(self, timeout: float, startup_timeout: float = startup.DEFAULT_ALLOWANCE_S) -> None:
        self.timeout = timeout
        startup.set_allowance(startup_timeout)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item):
        with _deadline(self.timeout, f"setup of {item.nodeid}"):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        with _deadline(self.timeout, item.nodeid):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem):
        with _deadline(self.timeout, f"teardown of {item.nodeid}"):
            return (yield)
