"""The per-test timeout: a hang in the plugin ends one test as ``timed_out``.

Each phase of a test (setup, call, teardown) gets ``--test-timeout`` seconds. When
they run out, a ``TestTimedOut`` is raised in the test's thread (SIGALRM), which
interrupts Python code and waits in sleeps, locks and I/O. A hang that never returns
to the interpreter (a spin in native code) cannot be interrupted: ``GRACE_S`` later
faulthandler dumps every thread's stack and ends the process; under a worker
(``conformance run``, or ``-n``) that test is then recorded as ``crashed``.
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
import sys
import threading

import pytest

from conformance.results.outcomes import TimedOut

GRACE_S = 30.0


class TestTimedOut(TimedOut):
    __test__ = False  # an exception, not a test class


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
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


class Watchdog:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

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
