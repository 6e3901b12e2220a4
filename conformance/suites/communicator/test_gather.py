"""Communicator suite, gather."""

import pytest

from conformance.suites.communicator import checks

SHAPES = [(1,), (6,), (2, 3), (2, 1, 3)]


@pytest.mark.contract("communicator.gather.dst_only")
def test_gather_reaches_dst_only(ranks, dtypes):
    """``gather(x, dst, dim)`` returns the concatenation in rank order on rank
    ``dst`` and None on every other rank, for every dst and dim."""
    checks.assert_no_problems(ranks.run(checks.gather, dtypes, SHAPES))
