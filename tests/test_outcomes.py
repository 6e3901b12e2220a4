"""How test outcomes roll up into a contract's outcome."""

from __future__ import annotations

import pytest

from conformance.results.outcomes import count, roll_up


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["passed", "passed"], "passed"),
        (["passed", "not_supported"], "passed"),
        (["not_supported", "not_supported"], "not_supported"),
        (["passed", "skipped"], "passed"),
        (["skipped"], "skipped"),
        (["passed", "waived"], "waived"),
        (["passed", "failed", "error"], "failed"),
        (["error", "passed"], "error"),
        (["failed", "timed_out"], "timed_out"),
        (["timed_out", "crashed", "failed"], "crashed"),
        (["not_supported", "failed"], "failed"),
    ],
)
def test_roll_up(outcomes, expected):
    """One failing test fails the contract (the most severe failure shows); an
    opt-out never turns into a pass, and never hides a failure."""
    assert roll_up(outcomes) == expected


def test_roll_up_needs_outcomes():
    """A contract with no test has no outcome: that is an error, not a pass."""
    with pytest.raises(ValueError):
        roll_up([])


def test_count_orders_and_drops_zeros():
    """Counts follow the outcome vocabulary's order and leave out zeros."""
    assert list(count(["failed", "passed", "failed"]).items()) == [("passed", 1), ("failed", 2)]
