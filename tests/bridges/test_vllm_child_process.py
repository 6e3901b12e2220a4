"""The bridge's child process without vLLM: answers and exceptions come back as they
were, and an interrupted call kills the child at once instead of waiting for it."""

from __future__ import annotations

import os
import signal
import time

import pytest

from conformance.bridges.vllm.child_process import ChildCallTimeout, ChildProcess
from conformance.pytest_plugin import watchdog
from conformance.reference_engine.distributed import startup

#: A test deadline no step of these tests comes near, however busy the machine.
DEADLINE_S = 600.0


@pytest.fixture
def child():
    process = ChildProcess("test-child", {"CONFORMANCE_CHILD_TEST": "set"})
    yield process
    process.stop()


def test_a_call_answers_in_the_child_s_environment(child):
    assert child.call(os.getenv, "CONFORMANCE_CHILD_TEST") == "set"
    assert child.call(os.getpid) != os.getpid()


def test_what_the_call_raises_is_raised_here(child):
    with pytest.raises(ValueError, match=r"^invalid literal for int\(\) with base 10: 'x'$"):
        child.call(int, "x")
    assert child.call(int, "7") == 7  # and the child still serves


def test_an_interrupted_call_kills_the_child(child):
    """As a test's timeout interrupts a call that hangs: the interruption goes on, and
    the child is gone, not waited for."""
    class Interrupted(Exception):
        pass

    def interrupt(signum, frame):
        raise Interrupted

    pid = child.call(os.getpid)
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(Interrupted):
            child.call(time.sleep, 3600)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_call_past_its_timeout_kills_the_child(child):
    """A call past its timeout raises, and the child is killed (SIGKILL), not waited
    for: its hour-long sleep never finishes."""
    with pytest.raises(ChildCallTimeout, match=r"^sleep did not return within 1 s$"):
        child.call(time.sleep, 3600, timeout=1)
    assert not child._process.is_alive()
    assert child._process.exitcode == -signal.SIGKILL


def test_a_start_up_in_the_child_is_not_counted_against_the_test_timeout(child):
    """As vLLM's engine starts: the test's deadline is stopped while the child works
    within the start-up allowance, and runs again afterwards with what it had left."""
    with watchdog._deadline(DEADLINE_S, "the test"):
        with startup.starting_processes() as allowance_s:
            assert signal.getitimer(signal.ITIMER_REAL)[0] == 0, "the test's deadline kept running"
            assert child.call(os.getpid, timeout=allowance_s) != os.getpid()
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= DEADLINE_S
