"""Communicator suite, gather."""

import pytest

from conformance.suites.communicator import checks

SHAPES = [(1,), (6,), (2, 3), (2, 1, 3)]


@pytest.mark.contract("communicator.gather.dst_only")
def test_gather_reaches_dst_only(ranks, dtypes):
    """For every dst, declared dtype and dim (counted from the front and from the
    back) of 1- to 3-D shapes: rank ``dst``'s result is compared exactly with
    ``torch.cat`` of all ranks' inputs, and every other rank's result is checked
    against ``None``; results are compared again after all calls."""
    checks.assert_no_problems(ranks.run(checks.gather, dtypes, SHAPES, 1))


@pytest.mark.contract("communicator.gather.dst_only")
def test_gather_on_every_call(ranks, dtypes):
    """Twelve rounds of calls on shape ``(513,)`` to every dst (along dims 0 and ``-1``)
    per declared dtype, each round with new salted values; rank ``dst``'s result
    compared exactly with the concatenation, the others' with ``None``, and the results
    re-checked after the last call."""
    checks.assert_no_problems(ranks.run(checks.gather, dtypes, [(513,)], checks.REPEATED_CALLS))


@pytest.mark.contract("communicator.gather.dst_only")
def test_gather_without_dst_or_dim_collects_on_rank_zero_along_the_last(ranks, dtypes):
    """``gather(x, dst)`` for every dst and ``gather(x)``, on 2- and 3-D shapes in every
    declared dtype: the rank meant (``dst``, or 0) compared exactly with ``torch.cat``
    of all ranks' inputs along dim ``-1``, every other rank's result with ``None``, and
    the results again after all calls."""
    checks.assert_no_problems(ranks.run(checks.gather, dtypes, checks.DEFAULT_DIM_SHAPES, 1,
                                        checks.Arguments.DEFAULTS_LEFT_OUT))


@pytest.mark.contract("communicator.gather.dst_only")
def test_gather_on_strided_views(ranks, dtypes):
    """Shapes ``(6,)`` and ``(2, 3)`` to every dst along every dim in every declared
    dtype, each rank's input every other element of a tensor twice as wide along its
    last dim (a view with gaps, as an engine passes a column slice); rank ``dst``'s
    result compared exactly with the concatenation, the others' with ``None``, and the
    results again after all calls."""
    checks.assert_no_problems(ranks.run(checks.gather, dtypes, [(6,), (2, 3)], 1, checks.Arguments.GIVEN,
                                        checks.Layout.STRIDED_VIEW))
