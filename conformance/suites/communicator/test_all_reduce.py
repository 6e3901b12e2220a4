"""Communicator suite, all_reduce."""

import pytest

from conformance.suites.communicator import checks

#: One element to several MB, odd sizes included, and a 3-D tensor.
SHAPES = [(1,), (7,), (1000,), (4099,), (2, 3, 5), ((1 << 20) + 1,)]


@pytest.mark.contract("communicator.all_reduce.sum")
def test_all_reduce_sums_over_ranks(ranks, dtypes):
    """``all_reduce`` returns the element-wise sum over all ranks, exactly, on every
    rank, in the input's shape, dtype and device; and a returned tensor keeps its
    value after later calls."""
    checks.assert_no_problems(ranks.run(checks.all_reduce, dtypes, SHAPES, 2))


#: Calls of one shape in a row: past the warm-up after which graph-capturing
#: communicators replay, and past a small ring of staging buffers.
REPEATED_CALLS = 12


@pytest.mark.contract("communicator.all_reduce.sum")
def test_all_reduce_sums_on_every_call(ranks, dtypes):
    """The same rule on the N-th call: ``all_reduce`` called many times in a row on one
    shape, with new values each time, returns each call's own sum."""
    checks.assert_no_problems(ranks.run(checks.all_reduce, dtypes, [(513,)], REPEATED_CALLS))
