"""Communicator suite, barrier."""

import pytest

from conformance.suites.communicator import checks


@pytest.mark.contract("communicator.barrier.waits")
def test_barrier_waits_for_every_rank(ranks, tmp_path):
    """Three rounds in which rank 0 sleeps 0.3 s and touches a marker file before
    calling ``barrier()``; every rank checks that the marker exists as soon as its own
    ``barrier()`` returns."""
    checks.assert_no_problems(ranks.run(checks.barrier, str(tmp_path), 3, 0.3))
