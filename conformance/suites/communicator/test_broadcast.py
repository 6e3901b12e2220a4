"""Communicator suite, broadcast."""

import pytest

from conformance.suites.communicator import checks

SIZES = [1, 9, 4097, (1 << 19) + 7]


@pytest.mark.contract("communicator.broadcast.from_src")
def test_broadcast_copies_src_in_place(ranks, dtypes):
    """For every src and declared dtype, 1-D sizes 1 to 2**19 + 7: each rank passes a
    buffer holding its own input; both the returned tensor and the buffer are compared
    exactly with rank ``src``'s input, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.broadcast, dtypes, SIZES, 1))


@pytest.mark.contract("communicator.broadcast.from_src")
def test_broadcast_on_every_call(ranks, dtypes):
    """Twelve rounds of calls of size 513 from every src per declared dtype, each round
    with new salted values; the returned tensor and the buffer compared exactly with
    rank ``src``'s input, and the returned tensors re-checked after the last call."""
    checks.assert_no_problems(ranks.run(checks.broadcast, dtypes, [513], checks.REPEATED_CALLS))


@pytest.mark.contract("communicator.broadcast.from_src")
def test_broadcast_without_src_sends_from_rank_zero(ranks, dtypes):
    """``broadcast(x)`` of sizes 1 and 513 in every declared dtype: each rank passes a
    buffer holding its own input; the returned tensor and the buffer compared exactly
    with rank 0's input, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.broadcast, dtypes, [1, 513], 1,
                                        checks.Arguments.DEFAULTS_LEFT_OUT))


@pytest.mark.contract("communicator.broadcast.from_src")
def test_broadcast_on_strided_views(ranks, dtypes):
    """Sizes 9 and 513 from every src in every declared dtype, each rank's buffer every
    other element of a tensor twice as long (a view with gaps, as an engine passes a
    slice); the returned tensor and the buffer itself compared exactly with rank
    ``src``'s input: a view is written in place too. Compared again after all calls."""
    checks.assert_no_problems(ranks.run(checks.broadcast, dtypes, [9, 513], 1, checks.Arguments.GIVEN,
                                        checks.Layout.STRIDED_VIEW))
