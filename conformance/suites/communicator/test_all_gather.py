"""Communicator suite, all_gather."""

import pytest

from conformance.suites.communicator import checks

SHAPES = [(1,), (5,), (3, 4), (2, 3, 4), (4, 1, 3), ((1 << 16) + 3,)]


@pytest.mark.contract("communicator.all_gather.dims")
def test_all_gather_concatenates_in_rank_order(ranks, dtypes):
    """``all_gather(x, dim)`` returns every rank's tensor concatenated along ``dim``
    in rank order, on every rank, for every dim of 1- to 3-D tensors."""
    checks.assert_no_problems(ranks.run(checks.all_gather, dtypes, SHAPES, 2))
