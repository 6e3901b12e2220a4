"""Communicator suite, point to point."""

import pytest

from conformance.suites.communicator import checks


def _needs_pairs(ranks) -> None:
    if ranks.world_size < 2:
        pytest.skip("a world of one rank has no pair of ranks to send between")


@pytest.mark.contract("communicator.send_recv.pairs")
def test_send_recv_between_every_pair(ranks, dtypes):
    """Skipped for a world of one; every ordered pair of ranks sends a ``(3, 5)`` tensor
    salted by the destination, in every declared dtype, and the receiver compares it
    exactly with the sender's input, and again after all calls."""
    _needs_pairs(ranks)
    checks.assert_no_problems(ranks.run(checks.send_recv_pairs, dtypes, (3, 5), 1))


@pytest.mark.contract("communicator.send_recv.pairs")
def test_send_recv_on_every_call(ranks, dtypes):
    """Skipped for a world of one; twelve rounds in which every ordered pair of ranks
    sends a ``(513,)`` tensor, per declared dtype, each round with new salted values;
    each received tensor compared exactly with the sent one, then re-checked after the
    last call."""
    _needs_pairs(ranks)
    checks.assert_no_problems(ranks.run(checks.send_recv_pairs, dtypes, (513,), checks.REPEATED_CALLS))


@pytest.mark.contract("communicator.send_recv.default_peers")
def test_send_recv_default_peers_form_a_ring(ranks, dtypes):
    """Skipped for a world of one; with no peers given, even ranks send then receive and
    odd ranks the reverse, a ``(17,)`` tensor per declared dtype, compared exactly with
    the previous rank's input."""
    _needs_pairs(ranks)
    checks.assert_no_problems(ranks.run(checks.send_recv_ring, dtypes, (17,)))


@pytest.mark.contract("communicator.send_recv.pairs")
def test_send_recv_on_strided_views(ranks, dtypes):
    """Skipped for a world of one; every ordered pair of ranks sends a ``(3, 5)`` tensor
    that is every other element of a ``(3, 10)`` one (a view with gaps, as an engine
    passes a column slice), in every declared dtype; the receiver compares it exactly
    with the sender's input, and again after all calls."""
    _needs_pairs(ranks)
    checks.assert_no_problems(ranks.run(checks.send_recv_pairs, dtypes, (3, 5), 1, checks.Layout.STRIDED_VIEW))
