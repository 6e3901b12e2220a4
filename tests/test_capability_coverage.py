"""Capability coverage: the record says which contracts exercised every declared value,
and the verifier names the declared values no test exercised."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.contract.discovery import find_plugin, load_platform
from conformance.pytest_plugin.provenance import collect_provenance
from conformance.results import verify_record
from conformance.results.record import COVERED_DIMENSIONS, RecordedTest, RecordWriter
from conformance.results.verify import load_mustpass

SHIPPED_CPU_RECORD = Path(__file__).resolve().parent.parent / "matrix" / "records" / "cpu" / "cpu.record.json"


def test_every_value_the_cpu_platform_declares_is_exercised():
    """Rule: a run of the suites against the cpu platform exercises every declared
    dtype, head size, block size, KV-cache dtype and feature in some contract (the
    shipped record is regenerated whenever the suites change)."""
    record = json.loads(SHIPPED_CPU_RECORD.read_text())
    coverage = record["capability_coverage"]
    declared = record["provenance"]["device"]["capabilities"]
    for dimension in COVERED_DIMENSIONS:
        assert set(coverage[dimension]) == {str(v) for v in declared[dimension]}, dimension
    unexercised = {(d, v) for d, values in coverage.items() for v, contracts in values.items() if not contracts}
    assert unexercised == set()


def test_an_unexercised_declared_value_is_reported_unverified(tmp_path):
    """Rule: a declared value no recorded test exercised is listed with no contract,
    and verify names it as unverified; values the tests noted name their contracts."""
    provenance = collect_provenance(find_plugin("cpu"), load_platform("cpu"), ["pytest"])
    writer = RecordWriter(tmp_path / "r.record.json", provenance)
    for n, contract in enumerate(load_mustpass()):
        exercised = {"head_sizes": ["32", "64", "128"], "dtypes": ["float32"]} if n == 0 else {}
        writer.add(RecordedTest(f"t.py::test_{n}", contract, "passed", 0.1, "", exercised))
    writer.finish(0)
    record = json.loads(writer.path.read_text())
    first = next(iter(load_mustpass()))
    assert record["capability_coverage"]["head_sizes"] == {"32": [first], "64": [first], "128": [first], "256": []}
    verdict = verify_record(writer.path)
    assert verdict.line.startswith("CONFORMANT"), verdict.line
    assert "; unverified (declared, exercised by no test): dtypes bfloat16, dtypes float16, head_sizes 256" in verdict.line


def test_a_value_only_a_config_hook_saw_stays_unverified(tmp_path):
    """Rule: a declared value that tests only handed to a config hook or selector is
    listed under capability_config_checked, not capability_coverage, and verify names
    it unverified, "config-checked only"; a value computed with is verified whatever
    config checks also saw it."""
    provenance = collect_provenance(find_plugin("cpu"), load_platform("cpu"), ["pytest"])
    writer = RecordWriter(tmp_path / "r.record.json", provenance)
    everything = {dimension: [str(v) for v in provenance["device"]["capabilities"][dimension]]
                  for dimension in COVERED_DIMENSIONS}
    computed = {**everything, "block_sizes": everything["block_sizes"][1:]}
    config = {"block_sizes": everything["block_sizes"], "dtypes": everything["dtypes"]}
    for n, contract in enumerate(load_mustpass()):
        writer.add(RecordedTest(f"t.py::test_{n}", contract, "passed", 0.1, "",
                                computed if n == 0 else {}, config if n == 1 else {}))
    writer.finish(0)
    record = json.loads(writer.path.read_text())
    first, second = list(load_mustpass())[:2]
    smallest = everything["block_sizes"][0]
    assert record["capability_coverage"]["block_sizes"][smallest] == []
    assert record["capability_config_checked"]["block_sizes"][smallest] == [second]
    assert record["capability_coverage"]["dtypes"]["float32"] == [first]
    line = verify_record(writer.path).line
    assert f"; unverified (declared, exercised by no test): block_sizes {smallest} (config-checked only)" in line
    assert "dtypes" not in line.split("unverified")[1]
