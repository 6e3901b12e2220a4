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
    """Hypothesis draws ragged prefill, chunked and decode batches with a window of 1 to
    twice the block size (when the feature is declared); the output is compared with the
    float64 oracle within the dtype's tolerance."""
    require_feature(platform, "sliding_window")
    spec = data.draw(batch_specs(capabilities, sliding_window=True))
    check_against_oracle(platform, platform_name, spec, "attention.features.sliding_window")


@pytest.mark.contract("attention.features.sliding_window")
def test_sliding_window_on_covering_batches(platform, capabilities):
    """The covering batches of ``attention/coverage.py`` (every declared value and pair,
    and the breaking sizes) with a window of ``block_size + 3`` (``3 * block_size + 1``
    on breaking sizes), compared with the float64 oracle within tolerance."""
    _cover_feature(platform, capabilities, "sliding_window")


@pytest.mark.contract("attention.features.logits_soft_cap")
@SUITE_SETTINGS
@given(data=st.data())
def test_logits_soft_cap_matches_oracle(platform, platform_name, capabilities, data):
    """Hypothesis draws ragged prefill, chunked and decode batches with a soft cap of 5
    or 20 (when the feature is declared); the output is compared with the float64 oracle
    within the dtype's tolerance."""
    require_feature(platform, "logits_soft_cap")
    spec = data.draw(batch_specs(capabilities, logits_soft_cap=True))
    check_against_oracle(platform, platform_name, spec, "attention.features.logits_soft_cap")


@pytest.mark.contract("attention.features.logits_soft_cap")
def test_logits_soft_cap_on_covering_batches(platform, capabilities):
    """The covering batches of ``attention/coverage.py`` (every declared value and pair,
    and the breaking sizes) with a soft cap of 20, each compared with the float64 oracle
    within the dtype's tolerance."""
    _cover_feature(platform, capabilities, "logits_soft_cap")


def _cover_feature(platform, capabilities, feature: str) -> None:
    require_feature(platform, feature)
    contract = f"attention.features.{feature}"
    check_each(covering_specs(capabilities, _KINDS, **{feature: True}),
               lambda spec: compare_with_oracle(platform, spec, contract), contract)
