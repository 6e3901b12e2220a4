"""Communicator suite, point to point."""

import pytest

from conformance.suites.communicator import checks


def _needs_pairs(ranks) -> None:
    if ranks.world_size < 2:
        pytest.skip("a world of one rank has no pair of ranks to send between")


@pytest.mark.contract("communicator.send_recv.pairs")
def test_send_recv_between_every_pair(ranks, dtypes):
    """``send(x, dst)`` on one rank and ``recv(size, dtype, src)`` on the other
    deliver the tensor exactly, between every ordered pair of ranks."""
    _needs_pairs(ranks)
    checks.assert_no_problems(ranks.run(checks.send_recv_pairs, dtypes, (3, 5)))


@pytest.mark.contract("communicator.send_recv.default_peers")
def test_send_recv_default_peers_form_a_ring(ranks, dtypes):
    """Without peers, ``send`` goes to the next rank and ``recv`` takes from the
    previous one (a ring)."""
    _needs_pairs(ranks)
    checks.assert_no_problems(ranks.run(checks.send_recv_ring, dtypes, (17,)))
