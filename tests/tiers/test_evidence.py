"""A record reduced to what the rules read, and an earlier release's record judged
by that release's contract list."""

from __future__ import annotations

import pytest
from generated_records import make_record
from histories import NOW
from worked_example import RELEASE

from conformance.tiers import evidence_of, judge_by_release

CONTRACTS = sorted(RELEASE.contracts)


def passed(**overrides) -> dict:
    return {**{contract: "passed" for contract in CONTRACTS}, **overrides}


def profiled(record: dict) -> dict:
    record["provenance"]["mustpass_profile"] = "vllm"
    return record


@pytest.mark.parametrize(("record", "verdict"), [
    (make_record(passed(), kit=RELEASE), "CONFORMANT"),
    (make_record(passed(**{CONTRACTS[0]: "failed"}), kit=RELEASE), "NOT CONFORMANT"),
    (make_record({c: "passed" for c in CONTRACTS[1:]}, kit=RELEASE), "NOT CONFORMANT"),
    (make_record(passed(**{CONTRACTS[0]: [("waived", "waived: slow (https://x.example/1) [expires 2026-01-01]")]}),
                 kit=RELEASE), "NOT CONFORMANT"),
    (make_record(passed(**{CONTRACTS[0]: "not_supported"}), kit=RELEASE), "CONFORMANT"),
    (make_record(passed(), kit=RELEASE, complete=False), "INCOMPLETE"),
    (profiled(make_record(passed(), kit=RELEASE)), "NOT CHECKED"),
])
def test_an_earlier_releases_record_is_judged_by_its_contract_list(record, verdict):
    """Rule: CONFORMANT needs a complete record holding every contract of the release
    passed, not supported or waived (an expired waiver fails); a profile's record,
    judged by a list only its kit ships, stays unjudged."""
    assert judge_by_release(record, RELEASE.contracts, NOW) == verdict


def test_a_bridged_record_names_the_engine_it_ran_on():
    """Rule: the engine of a bridged run is the bridged interface's version, otherwise the kit's."""
    record = make_record(passed(), kit=RELEASE, plugin="npu", device="NPU-9", distribution="npu-dist")
    record["provenance"]["plugin"]["bridge"] = {"interface": "vllm", "version": "0.32.1",
                                                "supported_versions": ">=0.32.0,<0.33"}
    found = evidence_of("npu.json", record, "CONFORMANT", "ci", NOW)
    assert (found.engine, str(found.key), found.kit_version) == (
        "vllm 0.32.1", "npu on NPU-9 [npu-dist]", "0.1.0")
    assert evidence_of("cpu.json", make_record(passed(), kit=RELEASE), "CONFORMANT", "ci", NOW).engine == \
        "conformance 0.1.0"
