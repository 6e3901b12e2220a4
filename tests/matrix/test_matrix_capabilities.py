"""The capabilities view: declared capabilities judged by the contracts the record
says exercised them."""

from __future__ import annotations

from pathlib import Path

from generated_records import make_record
from scenario import CONTRACTS, FLAKY, REGRESSED, column

from conformance.matrix.capabilities import capability_rows, line_cells
from conformance.matrix.model import Cell
from conformance.matrix.sources import Accepted


def cells(matrix, label: str) -> dict[str, tuple[str, str]]:
    row = next(r for r in matrix.capabilities if r.label == label)
    return {c.plugin: (row.cells[c.id].state, row.cells[c.id].detail) for c in matrix.columns}


def test_rows_are_every_declared_value(matrix):
    labels = [r.label for r in matrix.capabilities]
    assert labels == ["dtype bfloat16", "dtype float16", "dtype float32", "head size 64",
                      "head size 128", "block size 16", "block size 128", "KV-cache dtype auto",
                      "feature sliding_window", "feature tensor_parallel"]


def test_verified_only_when_every_exercising_contract_passed(matrix):
    exercising = [c for c in CONTRACTS if c.startswith(("attention.", "engine."))]
    bf16 = cells(matrix, "dtype bfloat16")
    assert bf16["old"] == ("verified", f"{len(exercising)} contracts computed with it, all passed")
    assert bf16["cpu"][0] == "failing"
    assert f"{REGRESSED}: failed" in bf16["cpu"][1] and f"{FLAKY}: failed" in bf16["cpu"][1]


def test_failing_names_the_contract_and_its_outcome(matrix):
    npu_bf16 = cells(matrix, "dtype bfloat16")["npu"]
    assert npu_bf16 == ("failing", "attention.features.logits_soft_cap: not_supported; "
                        "attention.forward.mixed: failed; attention.kv_cache.write: error")


def test_a_waived_contract_marks_its_value_waived_not_failing(matrix):
    assert cells(matrix, "feature sliding_window")["npu"] == (
        "waived", "waived: attention.features.sliding_window; 0 of 1 passed")


def test_not_declared_and_unfinished_are_not_verified(matrix):
    assert cells(matrix, "head size 64")["npu"] == ("not_declared", "")
    state, detail = cells(matrix, "dtype float32")["gpu"]  # the killed run
    assert state == "unverified" and detail.startswith("the run did not finish")


def test_tensor_parallel_says_its_max_world_size(matrix):
    tp = cells(matrix, "feature tensor_parallel")
    assert tp["old"] == ("verified", "up to 4 ranks; 1 contract computed with it, all passed")
    assert tp["npu"] == ("not_declared", "")
    assert column(matrix, "npu").cells["engine.parallel.tensor_parallel"].outcome == "waived"


def _cell(record: dict, label: str) -> tuple[str, str]:
    accepted = Accepted(path=Path("r.record.json"), digest="", data=record, verdict="", verdict_line="")
    (row,) = [r for r in capability_rows(["c"], [line_cells(_Column(record), accepted)]) if r.label == label]
    return row.cells["c"].state, row.cells["c"].detail


class _Column:
    """A column as the grid makes it, with only what the capabilities view reads."""

    id = "c"

    def __init__(self, record: dict) -> None:
        self.cells = {c: Cell(entry["outcome"], "", None) for c, entry in record["contracts"].items()}


def test_a_value_no_test_exercised_is_unverified():
    record = make_record({c: "passed" for c in CONTRACTS})
    record["capability_coverage"]["head_sizes"]["128"] = []
    assert _cell(record, "head size 128") == ("unverified", "declared, but no test exercised it")
    del record["capability_coverage"]
    assert _cell(record, "head size 64") == ("unverified", "the record lists no capability coverage")


def test_a_value_only_config_checked_is_unverified_and_says_so():
    """A value no test computed with stays unverified however many config hooks
    accepted it (kit 0.2.5 records list those apart), and the cell names them."""
    record = make_record({c: "passed" for c in CONTRACTS})
    record["capability_coverage"]["head_sizes"]["128"] = []
    record["capability_config_checked"] = {"head_sizes": {"128": ["platform.config.check_and_update"]}}
    assert _cell(record, "head size 128") == (
        "unverified", "declared, but only config-checked (platform.config.check_and_update): "
                      "no test computed with it")
