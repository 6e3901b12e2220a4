"""The outcome vocabulary of the kit, and how a contract's outcome rolls up.

This module is the one place the vocabulary is defined: the record schema, the
matrix's model, schema, stylesheet and script take the names, their orders and
glyphs from here or are tested equal to them (``tests/test_outcomes.py``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Outcome(str, enum.Enum):
    """How a test, or a contract, ended. Members are strings, so they compare equal
    to, and are written to records as, their values."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    NOT_SUPPORTED = "not_supported"
    WAIVED = "waived"
    SKIPPED = "skipped"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


PASSED, FAILED, ERROR, CRASHED, TIMED_OUT, NOT_SUPPORTED, WAIVED, SKIPPED = Outcome

#: Every outcome a test can have, in the order summaries print them.
OUTCOMES = tuple(Outcome)
_VALUES = tuple(outcome.value for outcome in OUTCOMES)
_VALUE_SET = frozenset(_VALUES)
_MEMBERS = {outcome.value: outcome for outcome in OUTCOMES}

#: Outcomes that mean the plugin broke a rule (or the kit could not tell), most
#: severe first.
FAILING = (CRASHED, TIMED_OUT, FAILED, ERROR)

#: Which outcome a contract takes when its tests ended differently: the first of
#: these present (``roll_up``).
ROLL_UP_ORDER = (*FAILING, WAIVED, PASSED, NOT_SUPPORTED, SKIPPED)

#: A matrix cell for a contract its record does not show running (absent or skipped):
#: a status of the published matrix, never of a test.
NOT_RUN = "not_run"

#: What a matrix cell can say: the outcomes a contract rolls up to that report a
#: verdict, and ``not_run`` in place of ``skipped``.
CELL_OUTCOMES = (*(o.value for o in OUTCOMES if o is not SKIPPED), NOT_RUN)

#: Cells from the worst to the best, for sorting: failures, then what is not a pass
#: (waived, never run, declared unsupported), then passes.
SEVERITY = (*(o.value for o in FAILING), WAIVED.value, NOT_RUN, NOT_SUPPORTED.value, PASSED.value)

#: A glyph per status, so a status reads without colour.
GLYPHS = {
    PASSED: "✔", FAILED: "✘", ERROR: "⚠", CRASHED: "☠", TIMED_OUT: "◷",
    NOT_SUPPORTED: "⊘", WAIVED: "≈", SKIPPED: "-", NOT_RUN: "∅",
}

#: Skip reasons that start with this are declared opt-outs (``not_supported``), never
#: plain skips and never passes.
NOT_SUPPORTED_PREFIX = "not supported: "


def roll_up(outcomes: Iterable[str]) -> str:
    """The outcome of a contract from its tests' outcomes.

    Any failing test fails the contract (the most severe failure wins); otherwise a
    waiver shows; otherwise one pass is enough, because the remaining tests cover
    declared-unsupported variants; a contract with no test that ran is
    ``not_supported`` or ``skipped``.
    """
    present = set(outcomes)
    # Most contracts' tests share one outcome, and verifying a record rolls up each of
    # its contracts (300,000 times for the matrix benchmark): that case is one lookup.
    if len(present) == 1 and (only := next(iter(present))) in _MEMBERS:
        return _MEMBERS[only]
    for outcome in ROLL_UP_ORDER:
        if outcome in present:
            return outcome
    raise ValueError("a contract needs at least one test outcome to roll up")


def count(outcomes: Iterable[str]) -> dict[str, int]:
    """Outcome counts in ``OUTCOMES`` order, zeros left out."""
    tally: dict[str, int] = {}
    for outcome in outcomes:
        tally[outcome] = tally.get(outcome, 0) + 1
    return in_order(tally)


def in_order(tally: dict[str, int]) -> dict[str, int]:
    """``tally`` (outcome -> how many) in ``OUTCOMES`` order; what is not an outcome
    is left out."""
    # A contract's tests mostly share one outcome: this runs once per contract of every
    # record the matrix reads (300,000 times for its benchmark), so that case is short.
    if len(tally) == 1 and next(iter(tally)) in _VALUE_SET:
        return dict(tally)
    return {value: tally[value] for value in _VALUES if value in tally}


class TimedOut(Exception):
    """Raised by a harness when the code under test did not finish in time; the
    test is recorded as ``timed_out``, not ``failed``."""


class Crashed(Exception):
    """Raised by a harness when a process running the code under test died; the
    test is recorded as ``crashed``, not ``failed``."""
