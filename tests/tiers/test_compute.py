"""Tiers from generated histories: promotion, demotion, and what each rule explains."""

from __future__ import annotations

import pytest
from histories import NOW, history, key

from conformance.tiers import compute_tiers, load_policy


@pytest.fixture(scope="module")
def policy():
    return load_policy()


def tier_of(records, policy):
    (result,) = compute_tiers(records, policy, NOW).values()
    return result


def check(result, rule):
    (found,) = [c for c in result.checks if c.rule == rule]
    return found


def test_promotion_after_ten_green_nightly_records(policy):
    """Rule: nine green CI nights make a platform supported, needing only the streak for
    official; the tenth makes it official."""
    nine = tier_of(history("npu", "C" * 9), policy)
    assert nine.tier == "supported" and nine.next_tier == "official"
    assert [c.rule for c in nine.missing] == ["official.nightly_streak"]
    assert "9 CONFORMANT CI-built records in a row, 10 needed" in nine.missing[0].because
    ten = tier_of(history("npu", "C" * 10), policy)
    assert ten.tier == "official" and ten.next_tier is None and ten.missing == ()
    assert len(check(ten, "official.nightly_streak").records) == 10


def test_demotion_on_a_failing_record_names_it(policy):
    """Rule: a NOT CONFORMANT newest record breaks every streak: an official platform
    falls to experimental, and the explanation names the record that broke it."""
    result = tier_of(history("npu", "C" * 12 + "N"), policy)
    assert result.tier == "experimental" and result.next_tier == "supported"
    streak = check(result, "supported.green_streak")
    assert not streak.holds
    assert "broken by npu/day-1.record.json" in streak.because and "NOT CONFORMANT" in streak.because
    assert streak.records == ("npu/day-1.record.json",)


def test_an_incomplete_run_breaks_the_streak(policy):
    """Rule: a night whose run never finished is not a green night."""
    assert tier_of(history("npu", "C" * 10 + "I" + "CC"), policy).tier == "experimental"


@pytest.mark.parametrize(("days_ago", "tier", "failing"), [
    (7, "official", None), (8, "supported", "official.fresh"), (31, "experimental", "supported.fresh")])
def test_demotion_on_a_stale_record(policy, days_ago, tier, failing):
    """Rule: official needs a CI record at most 7 days old, supported one at most 30."""
    result = tier_of(history("npu", "C" * 10, days_ago=days_ago), policy)
    assert result.tier == tier
    if failing:
        assert f"is stale: {days_ago} days old" in check(result, failing).because


def test_self_reported_records_count_toward_experimental_only(policy):
    """Rule: unsigned records are evidence of a plugin, never of its support."""
    result = tier_of(history("npu", "C" * 20, trust="self_reported"), policy)
    assert result.tier == "experimental"
    assert "no CI-built or vendor-signed record; 3 CONFORMANT in a row needed" in result.missing[0].because


def test_vendor_signed_records_make_supported_but_not_official(policy):
    """Rule: official is hardware CI's: vendor-signed records reach supported only."""
    result = tier_of(history("npu", "C" * 20, trust="vendor"), policy)
    assert result.tier == "supported"
    assert "no CI-built record; 10 CONFORMANT in a row needed" in check(result, "official.nightly_streak").because


def test_an_expired_waiver_and_a_waived_contract_hold_a_platform_back(policy):
    """Rule: an expired waiver fails the supported tier's waiver rule; official waives nothing."""
    expired = tier_of(history("npu", "C" * 10, expired=("worker.memory.fraction",)), policy)
    assert expired.tier == "experimental"
    assert "expired waivers: worker.memory.fraction" in check(expired, "supported.waivers").because
    waived = tier_of(history("npu", "C" * 10, outcomes={"worker.memory.fraction": "waived"}), policy)
    assert waived.tier == "supported"
    assert "waives 1 contracts (worker.memory.fraction), at most 0" in check(waived, "official.waivers").because


def test_a_suite_only_declared_not_supported_does_not_count(policy):
    """Rule: official needs passed contracts in every suite; not_supported shows nothing."""
    result = tier_of(history("npu", "C" * 10, outcomes={"communicator.area.rule": "not_supported"}), policy)
    assert result.tier == "supported"
    assert "passed no contract of the suites communicator" in check(result, "official.suites").because


def test_records_no_verifier_judged_count_toward_nothing(policy):
    """Rule: a record this kit did not judge is listed, and counts toward no rule."""
    result = tier_of(history("npu", "???"), policy)
    assert result.tier is None and result.next_tier == "experimental"
    assert len(result.not_judged) == 3
    assert "0 judged records, 1 needed" in check(result, "experimental.has_record").because


def test_each_platform_is_judged_on_its_own_records(policy):
    """Rule: tiers are per platform line: one platform's failure is not another's."""
    results = compute_tiers(history("npu", "C" * 10) + history("gpu", "CCN"), policy, NOW)
    assert {str(k): r.tier for k, r in results.items()} == {
        str(key("npu")): "official", str(key("gpu")): "experimental"}
