"""When a soft-failing CI device has earned promotion, by its promote_when."""

from __future__ import annotations

import pytest
from histories import NOW, history, key

from conformance.tiers import compute_tiers, load_policy
from conformance.tiers.promotion import promotions


@pytest.fixture(scope="module")
def policy():
    return load_policy()


def test_a_device_is_due_when_its_platform_holds_the_tier(policy):
    """Rule: promote_when naming a tier is due once the platform holds it (or higher);
    otherwise the failing rules up to that tier are what it needs."""
    results = compute_tiers(history("npu", "C" * 10) + history("gpu", "C" * 4), policy, NOW)
    (npu,) = promotions([("npu-box", "npu", "official")], results, policy)
    assert npu.due and npu.platform == str(key("npu")) and npu.because == "holds official"
    (gpu,) = promotions([("gpu-box", "gpu", "official")], results, policy)
    assert not gpu.due and gpu.because == "is supported; official needs official.nightly_streak"
    assert promotions([("gpu-box", "gpu", "supported")], results, policy)[0].due


def test_a_device_naming_a_rule_is_due_when_the_rule_holds(policy):
    """Rule: promote_when naming one rule is due when that rule holds, whatever else fails."""
    results = compute_tiers(history("gpu", "C" * 4), policy, NOW)
    (fresh,) = promotions([("gpu-box", "gpu", "official.fresh")], results, policy)
    assert fresh.due and fresh.because.startswith("official.fresh holds: the newest CI-built record is 1 day old")


def test_a_device_without_records_is_not_due(policy):
    """Rule: no record of the device's plugin is no evidence: not due, and said so."""
    (ghost,) = promotions([("ghost", "ghost", "supported")], compute_tiers([], policy, NOW), policy)
    assert not ghost.due and ghost.because == "no judged record of plugin 'ghost' among the records"
