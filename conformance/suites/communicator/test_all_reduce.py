"""Communicator suite, all_reduce."""

import pytest

from conformance.suites.communicator import checks

#: One element to several MB, odd sizes included, and a 3-D tensor.
SHAPES = [(1,), (7,), (1000,), (4099,), (2, 3, 5), ((1 << 20) + 1,)]


@pytest.mark.contract("communicator.all_reduce.sum")
def test_all_reduce_sums_over_ranks(ranks, dtypes):
    """Worlds of 1, 2 and 4 ranks reduce rank-dependent small integers (sums exact in
    every dtype) of six shapes up to 2**20 + 1 elements in every declared dtype, twice;
    compared bit for bit with the host's sum, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.all_reduce, dtypes, SHAPES, 2))


@pytest.mark.contract("communicator.all_reduce.sum")
def test_all_reduce_sums_on_every_call(ranks, dtypes):
    """Twelve calls in a row on shape ``(513,)`` per declared dtype, each with new
    salted values (past graph-replay warm-up and small staging-buffer rings); each
    result compared exactly with its own sum, then re-checked after the last call."""
    checks.assert_no_problems(ranks.run(checks.all_reduce, dtypes, [(513,)], checks.REPEATED_CALLS))


@pytest.mark.contract("communicator.all_reduce.sum")
def test_all_reduce_on_strided_views(ranks, dtypes):
    """Shapes ``(7,)`` and ``(2, 3, 5)`` in every declared dtype, each rank's input
    every other element of a tensor twice as wide along its last dim (a view with
    gaps, as an engine passes a column slice); compared exactly with the host's sum,
    and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.all_reduce, dtypes, [(7,), (2, 3, 5)], 1,
                                        checks.Layout.STRIDED_VIEW))
