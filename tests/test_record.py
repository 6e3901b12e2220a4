"""The result record: schema, incremental writing, verification, and killed runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import jsonschema
import patience
import pytest
from processes import assert_all_gone, clean_up, descendants, linux_only

from conformance.contract.discovery import find_plugin, load_platform
from conformance.pytest_plugin.provenance import collect_provenance
from conformance.results import verify_record
from conformance.results.record import RecordedTest, RecordWriter
from conformance.results.verify import (
    CONFORMANT,
    INCOMPLETE,
    INVALID,
    NOT_CONFORMANT,
    load_mustpass,
    load_schema,
)


@pytest.fixture
def writer(tmp_path) -> RecordWriter:
    provenance = collect_provenance(find_plugin("cpu"), load_platform("cpu"), ["pytest"])
    return RecordWriter(tmp_path / "r.json", provenance)


def _read(writer: RecordWriter) -> dict:
    return json.loads(writer.path.read_text())


def _rewrite(writer: RecordWriter, change) -> None:
    record = _read(writer)
    change(record)
    writer.path.write_text(json.dumps(record))


def test_record_is_valid_after_every_test(writer):
    """The file on disk matches the schema and holds every finished test after each
    one, marked incomplete until the run finishes."""
    schema = load_schema()
    for index in range(3):
        writer.add(RecordedTest(f"t.py::test_{index}", "platform.x.y", "passed", 0.1))
        record = _read(writer)
        jsonschema.validate(record, schema)
        assert not record["complete"] and len(record["tests"]) == index + 1
    writer.finish(0)
    record = _read(writer)
    assert record["complete"] and record["exit_status"] == 0
    assert record["provenance"]["finished_at"] is not None
    assert record["contracts"] == {"platform.x.y": {"outcome": "passed", "counts": {"passed": 3}}}


def test_unknown_outcome_is_refused():
    """A test result with an outcome outside the vocabulary cannot be made."""
    with pytest.raises(ValueError, match="great"):
        RecordedTest("t.py::test", None, "great", 0.0)


def test_verify_verdicts(writer):
    """verify: a complete passing record is CONFORMANT, one with a failed contract
    NOT CONFORMANT, an unfinished one INCOMPLETE."""
    writer.add(RecordedTest("t.py::test_a", "platform.capabilities.well_formed", "passed", 0.1))
    assert verify_record(writer.path).exit_code == INCOMPLETE
    writer.add(RecordedTest("t.py::test_b", "platform.config.model_arch", "failed", 0.1, "boom"))
    writer.finish(1)
    verdict = verify_record(writer.path)
    assert verdict.exit_code == NOT_CONFORMANT and "platform.config.model_arch" in verdict.line


def _every_required_contract(writer, outcome_of=lambda contract: "passed") -> None:
    for index, contract in enumerate(load_mustpass()):
        writer.add(RecordedTest(f"t.py::test_{index}", contract, outcome_of(contract), 0.1))


def test_verify_accepts_a_clean_record(writer):
    """verify: a complete record in which every required contract passed or is
    declared not supported is CONFORMANT."""
    _every_required_contract(
        writer, lambda c: "not_supported" if c.startswith("attention") else "passed")
    writer.finish(0)
    verdict = verify_record(writer.path)
    assert verdict.exit_code == CONFORMANT, verdict.line


def test_verify_requires_every_mustpass_contract(writer):
    """verify: a record missing a required contract (a partial run) is NOT CONFORMANT
    and names what never ran."""
    required = sorted(load_mustpass())
    _every_required_contract(writer)
    writer.finish(0)
    _rewrite(writer, lambda r: _drop_contract(r, required[0]))
    verdict = verify_record(writer.path)
    assert verdict.exit_code == NOT_CONFORMANT and required[0] in verdict.line, verdict.line


def test_verify_does_not_count_skips_as_conformance(writer):
    """verify: a contract whose tests were all skipped shows nothing: NOT CONFORMANT."""
    skipped = sorted(load_mustpass())[-1]
    _every_required_contract(writer, lambda c: "skipped" if c == skipped else "passed")
    writer.finish(0)
    verdict = verify_record(writer.path)
    assert verdict.exit_code == NOT_CONFORMANT and skipped in verdict.line, verdict.line


def _drop_contract(record: dict, contract: str) -> None:
    record["tests"] = [t for t in record["tests"] if t["contract"] != contract]
    record["contracts"].pop(contract)
    record["summary"]["passed"] -= 1


@pytest.mark.parametrize(
    ("tamper", "complaint"),
    [
        (lambda r: r["tests"][0].update(outcome="passed"), "roll-up"),
        (lambda r: r["provenance"].update(suite_hash="sha256:" + "0" * 64), "suite hash"),
        (lambda r: r["tests"][0].update(outcome="great"), "great"),
        (lambda r: r["tests"].append(dict(r["tests"][0])), "more than once"),
        (lambda r: r.pop("provenance"), "provenance"),
        (lambda r: r.update(tests=[], contracts={}, summary={}), "no test"),
        (lambda r: r["tests"][0].update(contract="platform.made.up"), "contract ids that kit"),
        (lambda r: r["provenance"].update(started_at="yesterday"), "provenance/started_at: 'yesterday'"),
        (lambda r: r["provenance"]["plugin"].update(name="cpu\u200b"), "provenance/plugin/name"),
    ],
    ids=["edited-outcome", "other-suites", "bad-outcome", "duplicate", "no-provenance", "empty",
         "unknown-contract", "bad-time", "invisible-name"],
)
def test_verify_rejects_invalid_records(writer, tamper, complaint):
    """verify: a record edited after the fact, made by other suites, outside the
    schema, with duplicates or with no tests is INVALID, and says why."""
    writer.add(RecordedTest("t.py::test_a", "platform.capabilities.well_formed", "failed", 0.1))
    writer.finish(1)
    _rewrite(writer, tamper)
    verdict = verify_record(writer.path)
    assert verdict.exit_code == INVALID and complaint in verdict.line, verdict.line


def test_verify_rejects_a_file_that_is_not_json(tmp_path):
    """verify: a truncated file is INVALID with one line naming it."""
    path = tmp_path / "broken.json"
    path.write_text('{"schema_version": 1, "tests": [')
    verdict = verify_record(path)
    assert verdict.exit_code == INVALID and str(path) in verdict.line and "\n" not in verdict.line


@pytest.mark.kit_run
@linux_only
def test_sigkilled_run_leaves_a_valid_incomplete_record(tmp_path, kit_env):
    """A run killed with SIGKILL midway (an out-of-memory kill, ``kill -9``) leaves a
    record that verifies as valid but incomplete, holding every test finished before
    the kill, and no process: not its pytest, not pytest's worker."""
    record_path = tmp_path / "killed.record.json"
    run = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--platform=hanging_synchronize",
         f"--record={record_path}", "-q"],
        cwd=tmp_path, env=kit_env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    started: set[int] = set()
    try:
        patience.wait_until(lambda: patience.tests_recorded(record_path) >= 10 or run.poll() is not None,
                            progress=lambda: patience.tests_recorded(record_path))
        finished = patience.tests_recorded(record_path)
        started = descendants(run.pid)
        assert run.poll() is None, "the run ended before it could be killed"
        assert len(started) >= 2, "expected the run's pytest and its worker"
        os.kill(run.pid, signal.SIGKILL)  # the run alone: SIGKILL cannot be passed on
        run.wait()
        assert_all_gone(started, "SIGKILL of conformance run")
    finally:
        clean_up(run, started)

    verdict = verify_record(record_path)
    assert verdict.exit_code == INCOMPLETE, verdict.line
    record = json.loads(record_path.read_text())
    assert not record["complete"] and record["provenance"]["finished_at"] is None
    assert len(record["tests"]) >= finished
    assert all(t["outcome"] == "passed" for t in record["tests"]), record["summary"]
