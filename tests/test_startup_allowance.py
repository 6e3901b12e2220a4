"""Starting processes is not counted against a test's deadline: a start-up longer than
--test-timeout passes, one past --startup-timeout ends the test as timed out naming the
start-up, and the test's time after its start-up is still bounded by --test-timeout.

The deadline is the watchdog's own (SIGALRM), armed here as it is for a test phase;
the ranks are real rank processes whose setup takes longer than that deadline."""

from __future__ import annotations

import signal
import time

import pytest

from conformance.pytest_plugin import watchdog
from conformance.pytest_plugin.arguments import unknown_options
from conformance.reference_engine.distributed import startup
from conformance.reference_engine.distributed.rank_processes import RankProcesses, RankTimeout

#: The test's deadline: each start-up below takes longer.
TEST_TIMEOUT_S = 3.0


def slow_setup(rank: int, world_size: int, init_method: str, seconds: float) -> int:
    time.sleep(seconds)
    return rank


def own_rank(rank: int) -> int:
    return rank


@pytest.fixture
def allowance():
    """Sets the start-up allowance, as ``--startup-timeout`` does; restored afterwards."""
    yield startup.set_allowance
    startup.set_allowance(startup.DEFAULT_ALLOWANCE_S)


def left_s() -> float:
    return signal.getitimer(signal.ITIMER_REAL)[0]


def test_a_start_longer_than_the_test_timeout_passes_and_the_test_keeps_its_time(allowance):
    allowance(300)
    ranks = RankProcesses(2, slow_setup, (2 * TEST_TIMEOUT_S,), timeout=TEST_TIMEOUT_S)
    try:
        with watchdog._deadline(TEST_TIMEOUT_S, "the test"):
            started = time.monotonic()
            ranks.start()
            assert time.monotonic() - started >= 2 * TEST_TIMEOUT_S
            # The deadline resumed with the time it had left, neither lost nor renewed.
            assert 0 < left_s() <= TEST_TIMEOUT_S
            assert ranks.call(own_rank) == [0, 1]
            # ... and the test's own time is still bounded by its timeout: the armed
            # timer holds at most what was left, and it, not the sleep, ends the wait.
            assert 0 < left_s() <= TEST_TIMEOUT_S
            with pytest.raises(watchdog.TestTimedOut, match="did not finish within --test-timeout=3 s"):
                time.sleep(3600)
    finally:
        ranks.kill()


def test_a_start_past_the_allowance_is_timed_out_naming_the_start_up(allowance):
    allowance(2)
    ranks = RankProcesses(2, slow_setup, (3600.0,), timeout=TEST_TIMEOUT_S)
    try:
        with watchdog._deadline(600, "the test"):
            # The ranks' setup sleeps an hour: only the allowance can end this start.
            with pytest.raises(RankTimeout, match=r"^ranks \[0, 1\] of 2 \(slow_setup\) did not start "
                                                  r"within --startup-timeout=2 s; the rank processes "
                                                  r"were killed$"):
                ranks.start()
            assert not ranks.running
            assert 0 < left_s() <= 600  # the test's deadline runs again
    finally:
        ranks.kill()


def test_a_start_up_pauses_each_registered_deadline_once(allowance):
    calls = []

    class Recorded:
        def pause(self, allowance_s):
            calls.append(("pause", allowance_s))

        def resume(self):
            calls.append(("resume",))

    allowance(5)
    with startup.deadline_registered(Recorded()):
        with startup.starting_processes() as allowance_s:
            assert allowance_s == 5
            with startup.starting_processes() as inner:  # nested: one pause, one resume
                assert inner == 5
    assert calls == [("pause", 5), ("resume",)]
    allowance(0)
    with startup.starting_processes() as allowance_s:  # registered no more
        assert allowance_s is None  # 0: no limit
    assert calls == [("pause", 5), ("resume",)]


def test_the_watchdog_sets_the_allowance_and_the_option_is_known():
    try:
        watchdog.Watchdog(300, 42)
        assert startup.allowance() == 42
    finally:
        startup.set_allowance(startup.DEFAULT_ALLOWANCE_S)
    assert unknown_options(["--startup-timeout=900", "--startup-timout=1"]) == [
        "--startup-timout (did you mean --startup-timeout?)"]
