"""History pages, regressions and flakiness, against the records' sequence."""

from __future__ import annotations

from scenario import FLAKY, RECOVERED, REGRESSED, column, history_of


def test_runs_are_listed_newest_first_with_verdict_and_counts(matrix):
    runs = history_of(matrix, "cpu").runs
    assert [r.date[:10] for r in runs] == ["2026-11-20", "2026-11-10", "2026-11-05", "2026-11-01"]
    assert runs[0].verdict == "NOT CONFORMANT" and runs[1].verdict == "CONFORMANT"
    assert runs[0].counts == {"passed": len(matrix.contracts) - 2, "failed": 2}
    assert all(r.compared for r in runs)


def test_only_transitions_are_listed(matrix):
    changes = [(t.date[:10], t.contract, t.before, t.after)
               for t in history_of(matrix, "cpu").transitions]
    assert changes == [  # newest first; a contract that kept its outcome is not listed
        ("2026-11-20", REGRESSED, "passed", "failed"),
        ("2026-11-20", FLAKY, "passed", "failed"),
        ("2026-11-10", RECOVERED, "failed", "passed"),
        ("2026-11-10", FLAKY, "failed", "passed"),
        ("2026-11-05", FLAKY, "passed", "failed"),
    ]


def test_regression_marked_when_it_passed_in_the_previous_record(matrix):
    cells = column(matrix, "cpu").cells
    assert cells[REGRESSED].regressed_since == "2026-11-10T08:00:00+00:00"
    assert cells[FLAKY].regressed_since == "2026-11-10T08:00:00+00:00"
    assert cells[RECOVERED].regressed_since is None
    assert all(c.regressed_since is None for c in column(matrix, "npu").cells.values())


def test_flaky_needs_both_directions_within_the_window(matrix):
    assert history_of(matrix, "cpu").flaky == [FLAKY]
    cells = column(matrix, "cpu").cells
    assert cells[FLAKY].flaky and not cells[RECOVERED].flaky and not cells[REGRESSED].flaky


def test_records_of_another_contract_version_are_shown_but_not_diffed(matrix):
    legacy = history_of(matrix, "legacy")
    assert [(r.kit_version, r.contract_version, r.compared) for r in legacy.runs] == [
        (matrix.kit_version, matrix.contract_version, True), ("0.0.9", "0.0", False)]
    assert legacy.runs[1].verdict == "NOT CHECKED"
    assert legacy.transitions == [] and legacy.flaky == []
    assert column(matrix, "legacy").cells[FLAKY].regressed_since is None
