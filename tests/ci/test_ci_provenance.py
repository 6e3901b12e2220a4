"""The record's `ci` section: Buildkite's own variables, or nothing; and the agent's
pre-flight, read by the run into ``provenance.device``."""

from __future__ import annotations

import json

import pytest

from conformance.contract.discovery import find_plugin, load_platform
from conformance.pytest_plugin.provenance import collect_provenance
from conformance.results import RecordWriter
from conformance.results.ci_provenance import (
    BUILDKITE_FIELDS,
    PREFLIGHT_FILE_LIMIT,
    PREFLIGHT_FILE_VARIABLE,
    RETRY_COUNT_VARIABLE,
    ci_provenance,
    preflight_findings,
)
from conformance.results.verify import verify_loaded

JOB = {
    "BUILDKITE": "true",
    "BUILDKITE_BUILD_URL": "https://buildkite.com/acme/conformance/builds/12",
    "BUILDKITE_BUILD_NUMBER": "12",
    "BUILDKITE_JOB_ID": "0190a5e4-0000-4000-8000-000000000001",
    "BUILDKITE_STEP_KEY": "conformance-cpu",
    "BUILDKITE_PIPELINE_SLUG": "conformance",
    "BUILDKITE_ORGANIZATION_SLUG": "acme",
    "BUILDKITE_AGENT_NAME": "box1-npu0",
    "BUILDKITE_AGENT_META_DATA_QUEUE": "npu",
    "BUILDKITE_COMMIT": "8e307f1a" * 5,
    "BUILDKITE_BRANCH": "main",
}


def test_every_field_comes_from_its_variable():
    section = ci_provenance(JOB)
    assert section == {"provider": "buildkite",
                       **{field: JOB[variable] for field, variable in BUILDKITE_FIELDS.items()}}


def test_outside_buildkite_there_is_no_section():
    assert ci_provenance({k: v for k, v in JOB.items() if k != "BUILDKITE"}) is None
    assert ci_provenance({}) is None


def test_unset_or_empty_variables_are_left_out_not_invented():
    job = {**JOB, "BUILDKITE_BRANCH": ""}
    del job["BUILDKITE_AGENT_META_DATA_QUEUE"]
    section = ci_provenance(job)
    assert "branch" not in section and "queue" not in section
    assert section["agent_name"] == "box1-npu0"


@pytest.mark.parametrize("value, recorded", [("0", 0), ("2", 2), ("", None), ("two", None),
                                             ("-1", None), ("٣", None)])
def test_the_retry_count_is_a_whole_number_or_left_out(value, recorded):
    section = ci_provenance({**JOB, RETRY_COUNT_VARIABLE: value})
    assert section.get("retry_count") == recorded


FOUND = {"expected_devices": 1, "found_devices": 1, "health_command": "vendor-smi",
         "health_exit_status": 0, "health_output": "driver 9.9, firmware 1.2\n",
         "problems": [], "healthy": True}


def test_without_a_preflight_file_there_is_no_preflight():
    assert preflight_findings({}) is None
    assert preflight_findings({PREFLIGHT_FILE_VARIABLE: ""}) is None


@pytest.mark.parametrize("content, error", [
    (None, "cannot read it: No such file or directory"),
    (b"[1, 2]", "not the pre-flight's JSON: not a JSON object"),
    (b"{", "not the pre-flight's JSON: Expecting property name"),
    (b"\xff{}", "not the pre-flight's JSON: 'utf-8' codec can't decode"),
    (b"{}" + b" " * PREFLIGHT_FILE_LIMIT, "not the pre-flight's JSON: over 65536 bytes"),
])
def test_a_preflight_file_that_is_not_one_is_recorded_as_an_error(tmp_path, content, error):
    path = tmp_path / "preflight.json"
    if content is not None:
        path.write_bytes(content)
    found = preflight_findings({PREFLIGHT_FILE_VARIABLE: str(path)})
    assert found.startswith(f"<error: {PREFLIGHT_FILE_VARIABLE}: {error}") and found.endswith(">")
    assert "\n" not in found


def test_the_run_puts_the_preflight_into_the_device_before_the_record_is_written(
        tmp_path, monkeypatch):
    """The record holds the agent's findings from its first write, so a signature
    made over the record the run wrote covers them: no step changes it later."""
    path = tmp_path / "preflight.json"
    path.write_text(json.dumps(FOUND))
    monkeypatch.setenv(PREFLIGHT_FILE_VARIABLE, str(path))
    writer = RecordWriter(tmp_path / "run.record.json",
                          collect_provenance(find_plugin("cpu"), load_platform("cpu"), ["test"]))
    written = json.loads(writer.path.read_text())
    assert written["complete"] is False and written["tests"] == []
    assert written["provenance"]["device"]["preflight"] == FOUND
    assert verify_loaded(written, "run.record.json").line.startswith("INCOMPLETE")
