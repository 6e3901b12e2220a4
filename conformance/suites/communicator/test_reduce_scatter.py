"""Communicator suite, reduce_scatter."""

import pytest

from conformance.suites.communicator import checks

#: Shapes per rank; the dim being scattered is scaled by the world size.
SHAPES = [(1,), (5,), (3, 4), (2, 3, 4), ((1 << 16) + 3,)]
#: Small 1- to 3-D shapes, for the calls on views.
VIEW_SHAPES = [(5,), (3, 4), (2, 3, 4)]


@pytest.mark.contract("communicator.reduce_scatter.dims")
def test_reduce_scatter_gives_each_rank_its_chunk(ranks, dtypes):
    """Each 1- to 3-D per-rank shape is scaled by the world size along every dim,
    counted from the front and from the back, in every declared dtype, twice; each
    rank's result is compared exactly with its chunk of the host's integer sum of all
    ranks' inputs, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.reduce_scatter, dtypes, SHAPES, 2))


@pytest.mark.contract("communicator.reduce_scatter.dims")
def test_reduce_scatter_on_every_call(ranks, dtypes):
    """Twelve rounds of calls on per-rank shape ``(2, 257)`` (scattered along dims 0,
    1, ``-2`` and ``-1``) per declared dtype, each round with new salted values; each
    result compared exactly with its chunk of the sum, then re-checked after the last
    call."""
    checks.assert_no_problems(ranks.run(checks.reduce_scatter, dtypes, [(2, 257)], checks.REPEATED_CALLS))


@pytest.mark.contract("communicator.reduce_scatter.dims")
def test_reduce_scatter_without_dim_scatters_along_the_last(ranks, dtypes):
    """``reduce_scatter(x)`` on 2- and 3-D per-rank shapes whose last dim is scaled by
    the world size, in every declared dtype; each rank's result compared exactly with
    its chunk along dim ``-1`` of the host's sum, and again after all calls."""
    checks.assert_no_problems(ranks.run(checks.reduce_scatter, dtypes, checks.DEFAULT_DIM_SHAPES, 1,
                                        checks.Arguments.DEFAULTS_LEFT_OUT))


@pytest.mark.contract("communicator.reduce_scatter.dims")
def test_reduce_scatter_on_strided_views(ranks, dtypes):
    """Per-rank shapes ``(5,)``, ``(3, 4)`` and ``(2, 3, 4)`` scaled by the world size
    along every dim, in every declared dtype, each rank's input every other element of
    a tensor twice as wide along its last dim (a view with gaps, as an engine passes a
    column slice); compared exactly with its chunk of the host's sum, and again after
    all calls."""
    checks.assert_no_problems(ranks.run(checks.reduce_scatter, dtypes, VIEW_SHAPES, 1,
                                        checks.Arguments.GIVEN, checks.Layout.STRIDED_VIEW))
