"""The capabilities view: declared capabilities judged by the contracts exercising them."""

from __future__ import annotations

from scenario import FLAKY, REGRESSED, column

from conformance.matrix.capabilities import EXERCISED_BY


def cells(matrix, label: str) -> dict[str, tuple[str, str]]:
    row = next(r for r in matrix.capabilities if r.label == label)
    return {c.plugin: (row.cells[c.id].state, row.cells[c.id].detail) for c in matrix.columns}


def test_rows_are_every_declared_value(matrix):
    labels = [r.label for r in matrix.capabilities]
    assert labels == ["dtype bfloat16", "dtype float16", "dtype float32", "head size 64",
                      "head size 128", "block size 16", "block size 128", "KV-cache dtype auto",
                      "feature sliding_window", "feature tensor_parallel"]


def test_verified_only_when_every_exercising_contract_passed(matrix):
    bf16 = cells(matrix, "dtype bfloat16")
    assert bf16["old"] == ("verified", f"{len(EXERCISED_BY['dtypes']) + 1} contracts passed")
    assert bf16["cpu"][0] == "failing"
    assert f"{REGRESSED}: failed" in bf16["cpu"][1] and f"{FLAKY}: failed" in bf16["cpu"][1]


def test_failing_names_the_contract_and_its_outcome(matrix):
    npu_bf16 = cells(matrix, "dtype bfloat16")["npu"]
    assert npu_bf16 == ("failing", "attention.forward.mixed: failed; attention.kv_cache.write: error")
    assert cells(matrix, "feature sliding_window")["npu"] == (
        "failing", "attention.features.sliding_window: waived")


def test_not_declared_and_not_run_are_not_verified(matrix):
    assert cells(matrix, "head size 64")["npu"] == ("not_declared", "")
    state, detail = cells(matrix, "dtype float32")["gpu"]  # the killed run never got there
    assert state == "unverified" and detail.startswith("not run: ")
    assert "platform.capabilities.dtypes_compute" in detail and "engine.generate.fp32_greedy" in detail


def test_tensor_parallel_says_its_max_world_size(matrix):
    tp = cells(matrix, "feature tensor_parallel")
    assert tp["old"] == ("verified", "up to 4 ranks; 9 contracts passed")
    assert tp["npu"] == ("not_declared", "")
    assert column(matrix, "npu").cells["engine.parallel.tensor_parallel"].outcome == "waived"
