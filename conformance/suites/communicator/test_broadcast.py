"""Communicator suite, broadcast."""

import pytest

from conformance.suites.communicator import checks

SIZES = [1, 9, 4097, (1 << 19) + 7]


@pytest.mark.contract("communicator.broadcast.from_src")
def test_broadcast_copies_src_in_place(ranks, dtypes):
    """``broadcast(x, src)`` writes rank ``src``'s tensor into ``x`` on every rank
    and returns it, for every src."""
    checks.assert_no_problems(ranks.run(checks.broadcast, dtypes, SIZES))
