"""The start-up allowance: starting processes is not counted against a test's deadline.

A rank or an engine process imports torch and the plugin (on a bridged platform,
vLLM) before it can answer: on a loaded machine that alone takes minutes, and a test
whose deadline kept running through it timed out while its processes were still
starting. ``starting_processes()`` wraps such a start: while it runs, the deadline of
the running test is paused (the pytest plugin's watchdog registers it here with
``deadline_registered``, so this layer never imports the plugin), the start itself is
bounded by the start-up allowance instead (``--startup-timeout``, default 600 s;
the caller's wait keeps to the seconds it yields), and afterwards the test's deadline
resumes with the time it had left.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol

#: ``--startup-timeout``'s default: how long starting processes may take.
DEFAULT_ALLOWANCE_S = 600.0
OPTION = "--startup-timeout"


class Deadline(Protocol):
    """A running deadline that a start-up pauses (the watchdog's, for a test phase)."""

    def pause(self, allowance_s: float | None) -> None:
        """Stop counting; the start-up will take at most ``allowance_s`` (None: no limit)."""

    def resume(self) -> None:
        """Count again, with the time that was left when paused."""


_allowance_s: float | None = DEFAULT_ALLOWANCE_S
_deadlines: list[Deadline] = []
_depth = 0


def set_allowance(seconds: float | None) -> None:
    """The start-up allowance from here on; 0 or None: no limit."""
    global _allowance_s
    _allowance_s = seconds if seconds and seconds > 0 else None


def allowance() -> float | None:
    return _allowance_s


@contextlib.contextmanager
def deadline_registered(deadline: Deadline) -> Iterator[None]:
    """``deadline`` is paused by every start-up while this block runs."""
    _deadlines.append(deadline)
    try:
        yield
    finally:
        _deadlines.remove(deadline)


def timed_out_message(what: str, allowance_s: float | None) -> str:
    limit = f"{OPTION}={allowance_s:g} s" if allowance_s is not None else OPTION
    return f"{what} did not start within {limit}"


@contextlib.contextmanager
def starting_processes() -> Iterator[float | None]:
    """Pause the registered deadlines while processes start; yields the allowance
    (seconds, None for no limit) the caller's wait for the start must keep to. A start
    past it should raise the caller's timeout with ``timed_out_message``."""
    global _depth
    allowance_s = _allowance_s
    outermost = _depth == 0
    paused = list(_deadlines) if outermost else []
    _depth += 1
    try:
        for deadline in paused:
            deadline.pause(allowance_s)
        yield allowance_s
    finally:
        _depth -= 1
        for deadline in reversed(paused):
            deadline.resume()
