"""The grid's columns and cells, against the records they came from."""

from __future__ import annotations

import hashlib

import pytest
from scenario import CONTRACTS, HOSTILE, NPU_ABSENT, NPU_OUTCOMES, column

from conformance.results.outcomes import CELL_OUTCOMES


def test_one_column_per_platform_line_shown_by_its_newest_record(matrix, scenario):
    _, paths, built = scenario
    assert [(c.plugin, c.device) for c in matrix.columns] == [
        ("cpu", "Test CPU"), ("gpu", "GPU X"), ("legacy", "Legacy"), ("npu", "NPU-9"),
        ("old", "Old Board"), ("retro", "Retro")]
    cpu = column(matrix, "cpu")
    assert cpu.date == "2026-11-20T08:00:00+00:00"
    source, digest = built.copies[cpu.record]
    assert source == paths["cpu-20"] and digest == hashlib.sha256(source.read_bytes()).hexdigest()


def test_rows_are_the_mustpass_contracts_in_order_grouped_by_suite(matrix):
    assert [c.id for c in matrix.contracts] == CONTRACTS
    assert all(c.required and c.rule for c in matrix.contracts)
    suites = [c.suite for c in matrix.contracts]
    assert suites == sorted(suites, key=suites.index)  # each suite's rows together


@pytest.mark.parametrize("contract", sorted(NPU_OUTCOMES))
def test_each_cell_says_the_records_outcome_and_first_message_line(matrix, contract):
    cell = column(matrix, "npu").cells[contract]
    (outcome, message), = NPU_OUTCOMES[contract]
    assert cell.outcome == ("not_run" if outcome == "skipped" else outcome)
    assert cell.duration == 0.25
    if outcome == "skipped":
        assert cell.message == f"skipped: {message}"
    else:
        assert cell.message == message.splitlines()[0]


def test_a_contract_absent_from_the_record_is_not_run_never_passed(matrix):
    cell = column(matrix, "npu").cells[NPU_ABSENT]
    assert (cell.outcome, cell.duration) == ("not_run", None)


def test_waived_cells_carry_the_reason_and_only_an_http_link(matrix):
    cells = column(matrix, "npu").cells
    sliding = cells["attention.features.sliding_window"].waiver
    assert (sliding.reason, sliding.link) == (f"firmware 1.2 {HOSTILE}", "https://example.com/bugs/12")
    tp = cells["engine.parallel.tensor_parallel"].waiver
    assert (tp.reason, tp.link) == ("tp hangs", None)


def test_every_outcome_appears_and_columns_count_them_instead_of_a_score(matrix):
    npu = column(matrix, "npu")
    assert set(npu.counts) == set(CELL_OUTCOMES)
    assert sum(npu.counts.values()) == len(CONTRACTS)
    assert npu.counts["not_run"] == 2  # the skipped contract and the absent one
    assert npu.counts["waived"] == 2


def test_an_incomplete_record_is_partial_with_what_it_covers(matrix):
    gpu = column(matrix, "gpu")
    assert gpu.partial == f"partial (10 of {len(CONTRACTS)} contracts)"
    assert gpu.verdict == "INCOMPLETE"
    assert gpu.counts == {"passed": 10, "not_run": len(CONTRACTS) - 10}
    assert column(matrix, "cpu").partial is None


def test_header_carries_versions_host_verdict_and_only_http_build_links(matrix):
    gpu, npu = column(matrix, "gpu"), column(matrix, "npu")
    assert gpu.ci_build == "https://buildkite.example/builds/7"
    assert npu.ci_build is None  # its record says javascript:
    assert npu.verdict == "NOT CONFORMANT" and npu.verdict_line.startswith("NOT CONFORMANT: npu")
    assert (npu.kit_version, npu.contract_version) == (matrix.kit_version, matrix.contract_version)
    assert npu.host == "builder (x86_64, Linux)"
    assert npu.distribution == f"npu-plugin {HOSTILE}"
