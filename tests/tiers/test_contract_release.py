"""A release keeps its contract's snapshot and refuses a contract that moved under the
same contract version."""

from __future__ import annotations

import json

import pytest

from conformance.tiers import contract_release
from conformance.tiers.contract_release import ContractReleaseError

BEFORE = {"platform.Platform.reset": {"kind": "function", "signature": "(cls) -> None",
                                      "decorators": ["classmethod"], "rules": ["Rule: never raises."]}}
AFTER = {**BEFORE, "platform.Platform.flush": {"kind": "function", "signature": "(cls) -> None",
                                               "decorators": ["classmethod"], "rules": []}}


@pytest.fixture
def kept(tmp_path):
    """A folder holding kit 1.0's snapshot, contract version 1."""
    path, written = contract_release.keep("1.0", "1", BEFORE, tmp_path)
    assert written and json.loads(path.read_text())["interface"] == BEFORE
    return tmp_path


def test_a_changed_contract_needs_a_new_contract_version(kept):
    """Rule: releasing a changed contract under the previous release's contract version
    is refused, naming the drift command; with the version bumped it is allowed."""
    with pytest.raises(ContractReleaseError, match=r"changed since kit 1.0 \(1 changes: conformance drift "
                                                   r"--from 1.0\) but CONTRACT_VERSION is still 1"):
        contract_release.check("1.1", "1", AFTER, kept)
    contract_release.check("1.1", "2", AFTER, kept)
    contract_release.check("1.1", "1", BEFORE, kept)  # nothing changed: no bump needed


def test_a_released_version_keeps_its_contract(kept):
    """Rule: a version released once is never released again with another contract,
    and its snapshot is never rewritten."""
    with pytest.raises(ContractReleaseError, match="kit 1.0 was released with another contract"):
        contract_release.check("1.0", "2", AFTER, kept)
    contract_release.check("1.0", "1", BEFORE, kept)
    path, written = contract_release.keep("1.0", "2", AFTER, kept)
    assert not written and json.loads(path.read_text())["interface"] == BEFORE


def test_versions_compare_as_versions(kept):
    """Rule: the previous release is the highest kept version below the new one (1.10
    comes after 1.9), never the newest file or the highest string."""
    contract_release.keep("1.9", "2", AFTER, kept)
    contract_release.check("1.10", "2", AFTER, kept)  # 1.9 is previous: same contract
    with pytest.raises(ContractReleaseError, match="since kit 1.0"):
        contract_release.check("1.5", "1", AFTER, kept)  # 1.0 is previous for 1.5
