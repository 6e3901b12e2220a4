"""Communicator suite, barrier."""

import pytest

from conformance.suites.communicator import checks


@pytest.mark.contract("communicator.barrier.waits")
def test_barrier_waits_for_every_rank(ranks, tmp_path):
    """No rank leaves ``barrier()`` before every rank has entered it: work rank 0
    finishes just before entering is visible to all ranks right after."""
    checks.assert_no_problems(ranks.run(checks.barrier, str(tmp_path), 3, 0.3))
