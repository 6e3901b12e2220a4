"""The release gate on generated histories: who is held to the candidate, and why."""

from __future__ import annotations

import pytest
from histories import NOW, history, key

from conformance.tiers import load_policy, release_check

CANDIDATE = "0.2.0"


@pytest.fixture(scope="module")
def policy():
    return load_policy()


def entry(gate, plugin):
    (found,) = [e for e in gate.entries if e.key == key(plugin)]
    return found


def test_one_official_platform_blocks_the_release(policy):
    """Rule: an official platform whose candidate record is NOT CONFORMANT blocks the
    release, named with its record; a failing supported platform is listed, not
    blocking; an official platform CONFORMANT on the candidate passes."""
    records = (history("npu", "C" * 10, days_ago=3) + history("npu", "N", kit=CANDIDATE)
               + history("tpu", "C" * 10, days_ago=3) + history("tpu", "C", kit=CANDIDATE)
               + history("gpu", "CCC", days_ago=3) + history("gpu", "N", kit=CANDIDATE))
    gate = release_check(records, CANDIDATE, policy, NOW)
    assert [e.key for e in gate.blockers] == [key("npu")]
    npu = entry(gate, "npu")
    assert npu.standing == "official" and npu.record == "npu/day-1.record.json"
    assert f"its newest record of kit {CANDIDATE} is NOT CONFORMANT" in npu.because
    gpu = entry(gate, "gpu")
    assert gpu.standing == "supported" and not gpu.blocks and not gpu.conformant
    assert entry(gate, "tpu").conformant and not entry(gate, "tpu").blocks


def test_the_candidates_own_records_do_not_decide_who_is_held_to_it(policy):
    """Rule: the standing is computed without the candidate's records, so failing
    candidate runs cannot demote a platform out of blocking."""
    records = history("npu", "C" * 10, days_ago=5) + history("npu", "NNNN", kit=CANDIDATE)
    assert entry(release_check(records, CANDIDATE, policy, NOW), "npu").blocks


@pytest.mark.parametrize(("candidate", "reason"), [
    ([], "record of kit 0.2.0"),
    (history("npu", "C", kit=CANDIDATE, days_ago=9), "9 days old, over the 7-day limit"),
    (history("npu", "C", kit=CANDIDATE, trust="self_reported"), "no judged CI-built or vendor-signed record of kit 0.2.0"),
])
def test_an_official_platform_without_a_fresh_vouched_record_blocks(policy, candidate, reason):
    """Rule: missing, stale or self-reported candidate records do not show conformance;
    npu was official when the candidate's first run (tpu's, 9 days ago) began, though
    its own newest record is now 10 days old."""
    first_run = history("tpu", "C", kit=CANDIDATE, days_ago=9)
    records = history("npu", "C" * 10, days_ago=10) + first_run + candidate
    gate = release_check(records, CANDIDATE, policy, NOW)
    assert entry(gate, "npu").blocks and reason in entry(gate, "npu").because


def test_nothing_official_blocks_nothing(policy):
    """Rule: with no platform at the blocking tier, the candidate may be released."""
    records = history("gpu", "CCC") + history("gpu", "N", kit=CANDIDATE)
    assert release_check(records, CANDIDATE, policy, NOW).blockers == ()


def test_the_standing_is_the_one_the_candidate_met(policy):
    """Rule: records of other kits made after the candidate's first run do not change
    who is held to it: npu failed an old-kit run after the candidate's testing began,
    and still blocks a failing candidate."""
    records = (history("npu", "C" * 10, days_ago=6) + history("npu", "N", kit=CANDIDATE, days_ago=5)
               + history("npu", "N", days_ago=2))
    gate = release_check(records, CANDIDATE, policy, NOW)
    assert entry(gate, "npu").standing == "official" and entry(gate, "npu").blocks
