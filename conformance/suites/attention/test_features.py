"""Attention suite, optional features: sliding window and logits soft cap, when declared."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.suites.attention.coverage import covering_specs
from conformance.suites.attention.strategies import (
    SUITE_SETTINGS,
    batch_specs,
    check_against_oracle,
    check_each,
    compare_with_oracle,
)
from conformance.suites.support import require_feature

_KINDS = ("prefill", "chunked", "decode")


@pytest.mark.contract("attention.features.sliding_window")
@SUITE_SETTINGS
@given(data=st.data())
def test_sliding_window_matches_oracle(platform, platform_name, capabilities, data):
    """With a sliding window ``w``, query at position ``p`` attends only to positions
    ``p - w + 1 .. p``, in prefill, chunked prefill and decode alike."""
    require_feature(platform, "sliding_window")
    spec = data.draw(batch_specs(capabilities, sliding_window=True))
    check_against_oracle(platform, platform_name, spec, "attention.features.sliding_window")


@pytest.mark.contract("attention.features.sliding_window")
def test_sliding_window_on_covering_batches(platform, capabilities):
    """The same rule on the explicit batches of ``attention/coverage.py`` (every declared
    value and pair, and the sizes where kernels break)."""
    _cover_feature(platform, capabilities, "sliding_window")


@pytest.mark.contract("attention.features.logits_soft_cap")
@SUITE_SETTINGS
@given(data=st.data())
def test_logits_soft_cap_matches_oracle(platform, platform_name, capabilities, data):
    """With a soft cap ``c``, scores become ``c * tanh(s / c)`` before the softmax."""
    require_feature(platform, "logits_soft_cap")
    spec = data.draw(batch_specs(capabilities, logits_soft_cap=True))
    check_against_oracle(platform, platform_name, spec, "attention.features.logits_soft_cap")


@pytest.mark.contract("attention.features.logits_soft_cap")
def test_logits_soft_cap_on_covering_batches(platform, capabilities):
    """The same rule on the explicit batches of ``attention/coverage.py`` (every declared
    value and pair, and the sizes where kernels break)."""
    _cover_feature(platform, capabilities, "logits_soft_cap")


def _cover_feature(platform, capabilities, feature: str) -> None:
    require_feature(platform, feature)
    contract = f"attention.features.{feature}"
    check_each(covering_specs(capabilities, _KINDS, **{feature: True}),
               lambda spec: compare_with_oracle(platform, spec, contract), contract)
