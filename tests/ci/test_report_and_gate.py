"""A device job's report and the collector's gate, against the stand-in agent."""

from __future__ import annotations

import json
import os

from ci_helpers import agent_env, conformance
from ci_records import write_record

from conformance.ci import markdown
from conformance.results.verify import load_mustpass

FIRST = next(iter(load_mustpass()))


def store_files(store, kind):
    folder = store / kind
    return {p.name: p.read_text() for p in folder.iterdir()} if folder.exists() else {}


def test_report_of_a_conformant_record(tmp_path):
    record = write_record(tmp_path / "results" / "cpu" / "job-1.record.json")
    store = tmp_path / "store"
    result = conformance("pipeline", "report", str(record), "--device", "cpu",
                         "--exit-status", "0", env=agent_env(store))
    assert result.returncode == 0, result.stderr
    annotations = store_files(store, "annotations")
    assert annotations["conformance-cpu.style"] == "success"
    body = annotations["conformance-cpu.md"]
    assert "CONFORMANT" in body
    assert f"(artifact://{record})" in body
    assert store_files(store, "meta-data") == {"conformance-verdict-cpu": "conformant"}


def test_report_of_a_failing_record_names_the_contract(tmp_path):
    record = write_record(tmp_path / "r.record.json", {FIRST: "crashed"})
    store = tmp_path / "store"
    result = conformance("pipeline", "report", str(record), "--device", "npu",
                         "--exit-status", "1", env=agent_env(store))
    assert result.returncode == 0, result.stderr
    body = store_files(store, "annotations")["conformance-npu.md"]
    assert markdown.text("NOT-CONFORMANT") in body
    assert f"- {markdown.text(FIRST)}: crashed" in body
    assert store_files(store, "annotations")["conformance-npu.style"] == "error"
    assert store_files(store, "meta-data") == {"conformance-verdict-npu": "not-conformant"}


def test_report_without_a_record_says_missing(tmp_path):
    store = tmp_path / "store"
    result = conformance("pipeline", "report", str(tmp_path / "none.record.json"),
                         "--device", "npu", "--exit-status", "4", env=agent_env(store))
    assert result.returncode == 0, result.stderr
    assert store_files(store, "meta-data") == {"conformance-verdict-npu": "missing"}
    assert "exit status 4" in store_files(store, "annotations")["conformance-npu.md"]


def test_report_of_an_incomplete_record_is_a_warning(tmp_path):
    record = write_record(tmp_path / "r.record.json", complete=False)
    store = tmp_path / "store"
    conformance("pipeline", "report", str(record), "--device", "npu", env=agent_env(store))
    assert store_files(store, "annotations")["conformance-npu.style"] == "warning"
    assert store_files(store, "meta-data") == {"conformance-verdict-npu": "incomplete"}


def gate(tmp_path, *args):
    store = tmp_path / "store"
    result = conformance("pipeline", "gate", str(tmp_path / "results"), *args,
                         env=agent_env(store))
    annotations = store_files(store, "annotations")
    return result, annotations.get("conformance-gate.md"), annotations.get("conformance-gate.style")


def test_gate_passes_when_required_devices_conform_and_shows_a_failing_soft_one(tmp_path):
    write_record(tmp_path / "results" / "cpu" / "job-1.record.json")
    write_record(tmp_path / "results" / "npu" / "job-2.record.json", {FIRST: "failed"})
    result, body, style = gate(tmp_path, "--required", "cpu",
                               "--soft-fail", "npu", "official.nightly_streak")
    assert result.returncode == 0, result.stdout + result.stderr
    assert style == "warning"
    assert markdown.text("soft-failing, not counted: npu") in body
    assert markdown.text("soft-fail until rule official.nightly_streak: the newest 10 CI-built "
                         "records are all CONFORMANT") in body


def test_gate_fails_when_a_required_record_is_missing(tmp_path):
    write_record(tmp_path / "results" / "cpu" / "job-1.record.json")
    result, body, style = gate(tmp_path, "--required", "cpu", "--required", "npu")
    assert result.returncode == 1
    assert style == "error"
    assert markdown.text("failed: npu required but not conformant") in body
    assert "| npu | required | missing |" in body
    assert "conformance gate: npu (required): MISSING" in result.stdout


def test_gate_fails_when_a_required_record_is_not_conformant(tmp_path):
    write_record(tmp_path / "results" / "cpu" / "job-1.record.json", {FIRST: "timed_out"})
    result, body, _ = gate(tmp_path, "--required", "cpu")
    assert result.returncode == 1
    assert f"| cpu | required | {markdown.text('not-conformant')} |" in body


def test_gate_takes_the_latest_attempt_of_a_retried_job(tmp_path):
    """By the records' retry counts: the first attempt's file is the newer download
    and its name sorts last, and the two records started within one second."""
    for job, retry_count, outcomes in [("job-b", 0, {FIRST: "failed"}), ("job-a", 1, None)]:
        path = write_record(tmp_path / "results" / "cpu" / f"{job}.record.json", outcomes)
        record = json.loads(path.read_text())
        record["provenance"]["ci"] = {"provider": "buildkite", "retry_count": retry_count}
        path.write_text(json.dumps(record))
    os.utime(tmp_path / "results" / "cpu" / "job-b.record.json", (2_000_000_000, 2_000_000_000))
    result, _, _ = gate(tmp_path, "--required", "cpu")
    assert result.returncode == 0, result.stdout
    assert "not used: job-b.record.json" in result.stdout
