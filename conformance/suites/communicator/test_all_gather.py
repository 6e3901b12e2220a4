"""Communicator suite, all_gather."""

import pytest

from conformance.suites.communicator import checks

SHAPES = [(1,), (5,), (3, 4), (2, 3, 4), (4, 1, 3), ((1 << 16) + 3,)]
#: Small 1- to 3-D shapes, for the calls on views.
VIEW_SHAPES = [(5,), (3, 4), (2, 3, 4)]


@pytest.mark.contract("communicator.all_gather.dims")
def test_all_gather_concatenates_in_rank_order(ranks, dtypes):
    """Worlds of 1, 2 and 4 ranks gather rank-dependent small-integer 1- to 3-D tensors
    (up to 65,539 elements) in every declared dtype along every dim, counted from the
    front and from the back, twice with new values; compared exactly with ``torch.cat``
    of all ranks' inputs, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.all_gather, dtypes, SHAPES, 2))


@pytest.mark.contract("communicator.all_gather.dims")
def test_all_gather_on_every_call(ranks, dtypes):
    """Twelve rounds of calls on shape ``(2, 257)`` (along dims 0, 1, ``-2`` and
    ``-1``) per declared dtype, each round with new salted values (past graph-replay
    warm-up and small staging-buffer rings); each result compared exactly with its own
    concatenation, then re-checked after the last call."""
    checks.assert_no_problems(ranks.run(checks.all_gather, dtypes, [(2, 257)], checks.REPEATED_CALLS))


@pytest.mark.contract("communicator.all_gather.dims")
def test_all_gather_without_dim_gathers_along_the_last(ranks, dtypes):
    """``all_gather(x)`` on 2- and 3-D shapes (whose last dim is neither the first nor
    the middle one) in every declared dtype, compared exactly with ``torch.cat`` of all
    ranks' inputs along dim ``-1``, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.all_gather, dtypes, checks.DEFAULT_DIM_SHAPES, 1,
                                        checks.Arguments.DEFAULTS_LEFT_OUT))


@pytest.mark.contract("communicator.all_gather.dims")
def test_all_gather_on_strided_views(ranks, dtypes):
    """Shapes ``(5,)``, ``(3, 4)`` and ``(2, 3, 4)`` along every dim in every declared
    dtype, each rank's input every other element of a tensor twice as wide along its
    last dim (a view with gaps, as an engine passes a column slice); compared exactly
    with ``torch.cat`` of all ranks' inputs, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.all_gather, dtypes, VIEW_SHAPES, 1, checks.Arguments.GIVEN,
                                        checks.Layout.STRIDED_VIEW))
