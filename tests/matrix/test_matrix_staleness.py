"""The written staleness rule, applied to every column."""

from __future__ import annotations

from scenario import column


def test_a_record_older_than_the_window_is_stale(matrix):
    assert column(matrix, "old").stale == f"last verified 2026-09-01 on kit {matrix.kit_version}"


def test_an_older_contract_version_is_stale_however_recent(matrix):
    assert column(matrix, "retro").stale == "last verified 2026-11-24 on kit 0.0.9"


def test_recent_records_of_this_contract_version_are_fresh(matrix):
    fresh = [c.plugin for c in matrix.columns if c.stale is None]
    assert fresh == ["cpu", "gpu", "legacy", "npu"]


def test_the_rule_is_written_with_its_numbers(matrix):
    assert matrix.stale_days == 30
    assert matrix.stale_rule.startswith(
        "A column is stale when its newest record is older than 30 days (started before "
        f"2026-10-26) or was made by a contract version older than this kit's ({matrix.contract_version})")
