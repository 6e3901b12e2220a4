"""The generated pipeline, run without a Buildkite server.

A stand-in `buildkite-agent` keeps artifacts, annotations and meta-data in a folder.
The device step's commands for the `cpu` platform run as a Buildkite job runs them
(after upload interpolation, under `bash -e -c`, then its artifact_paths uploaded),
and then the collector's, in a fresh checkout that only sees the uploaded artifacts.
"""

from __future__ import annotations

import json
import subprocess

import patience
import pytest
from ci_helpers import agent_env, pipeline_json, step, upload_interpolation, write_fleet

from conformance.ci import markdown
from conformance.results.verify import NOT_CONFORMANT, verify_record

#: Runs the kit as a CI job would (minutes of CPU): not part of the fast loop.
pytestmark = pytest.mark.kit_run

CPU = """
[[device]]
name = "cpu"
platform = "cpu"
queue = "cpu"
suites = ["platform"]   # one suite keeps the test short; the verdict is then partial
soft_fail = true
promote_when = "official"
"""
REQUIRED_GHOST = """
[[device]]
name = "npu"
platform = "my_npu"
queue = "npu"
"""
JOB_ID = "0190a5e4-0000-4000-8000-00000000c0de"
BUILD_URL = "https://buildkite.com/acme/conformance/builds/7"
#: The uploading job's environment: upload must leave every command untouched by it.
UPLOADER = {"BUILDKITE_JOB_ID": "the-uploaders-job", "HOME": "/uploader"}


def job_env(store, **extra):
    inherited = {k: v for k, v in agent_env(store).items()
                 if not k.startswith(("BUILDKITE", "PYTEST", "CONFORMANCE"))}
    return {**inherited, "BUILDKITE": "true", "BUILDKITE_BUILD_URL": BUILD_URL,
            "BUILDKITE_PIPELINE_SLUG": "conformance", "BUILDKITE_COMMIT": "8e307f1" * 5,
            **extra}


def run_job(job_step, checkout, environ):
    """Run a command step as the agent does; returns its exit status."""
    checkout.mkdir()
    script = "\n".join(upload_interpolation(c, UPLOADER) for c in job_step["commands"])
    status = subprocess.run(["bash", "-e", "-c", script], cwd=checkout, env=environ,
                            timeout=patience.scaled(1800)).returncode
    for pattern in job_step["artifact_paths"]:  # uploaded whatever the command did
        subprocess.run(["buildkite-agent", "artifact", "upload", pattern], cwd=checkout,
                       env=environ, check=True)
    return status


@pytest.fixture(scope="module")
def device_job(tmp_path_factory):
    """The cpu device step of a fleet with a required device that never reports."""
    root = tmp_path_factory.mktemp("build")
    pipeline = pipeline_json("--fleet", str(write_fleet(root, CPU + REQUIRED_GHOST)))
    store = root / "agent"
    environ = job_env(store, BUILDKITE_JOB_ID=JOB_ID, BUILDKITE_STEP_KEY="conformance-cpu",
                      BUILDKITE_AGENT_NAME="cpu-agent-1", BUILDKITE_AGENT_META_DATA_QUEUE="cpu")
    status = run_job(step(pipeline, "conformance-cpu"), root / "cpu-job", environ)
    return root, pipeline, store, status


def test_the_device_step_uploads_its_record_and_junit(device_job):
    _, _, store, status = device_job
    record = store / "artifacts" / "results" / "cpu" / f"{JOB_ID}.record.json"
    assert status == NOT_CONFORMANT  # the run's own verdict is the step's exit status
    assert verify_record(record).exit_code == NOT_CONFORMANT
    assert (store / "artifacts" / "results" / "cpu" / f"{JOB_ID}.junit.xml").is_file()
    content = json.loads(record.read_text())
    assert content["tests"] and all(t["contract"].startswith("platform.") for t in content["tests"])
    assert content["provenance"]["ci"] == {
        "provider": "buildkite", "build_url": BUILD_URL, "job_id": JOB_ID,
        "step_key": "conformance-cpu", "pipeline_slug": "conformance", "agent_name": "cpu-agent-1",
        "queue": "cpu", "commit": "8e307f1" * 5,
    }


def test_the_device_step_annotates_its_verdict_and_stores_it(device_job):
    _, _, store, _ = device_job
    body = (store / "annotations" / "conformance-cpu.md").read_text()
    assert markdown.text("NOT-CONFORMANT") in body
    assert markdown.text("required contracts never ran") in body
    assert f"(artifact://results/cpu/{JOB_ID}.record.json)" in body
    assert (store / "annotations" / "conformance-cpu.style").read_text() == "error"
    assert (store / "meta-data" / "conformance-verdict-cpu").read_text() == "not-conformant"


def collect(device_job, name, fleet_text):
    root, _, store, _ = device_job
    pipeline = pipeline_json("--fleet", str(write_fleet(root, fleet_text, f"{name}.toml")))
    collector = step(pipeline, "conformance-matrix")
    environ = job_env(store, BUILDKITE_JOB_ID=f"collector-{name}",
                      BUILDKITE_STEP_KEY="conformance-matrix")
    return run_job(collector, root / f"collector-{name}", environ), store


def test_the_collector_fails_when_a_required_record_is_missing(device_job):
    status, store = collect(device_job, "with-npu", CPU + REQUIRED_GHOST)
    assert status == 1
    gate = (store / "annotations" / "conformance-gate.md").read_text()
    assert "| npu | required | missing |" in gate
    assert markdown.text("soft-failing, not counted: cpu") in gate
    assert (store / "annotations" / "conformance-gate.style").read_text() == "error"


def test_the_collector_builds_the_matrix_from_the_uploaded_record(device_job):
    status, store = collect(device_job, "cpu-only", CPU)
    assert status == 0  # only a soft-failing device: visible, not failing
    assert (store / "annotations" / "conformance-gate.style").read_text() == "warning"
    site = store / "artifacts" / "site"
    matrix = json.loads((site / "matrix.json").read_text())
    (column,) = matrix["columns"]
    record = next((store / "artifacts" / "results" / "cpu").glob("*.record.json"))
    assert column["plugin"] == "cpu" and column["verdict"] == "NOT CONFORMANT"
    assert column["ci_build"] == BUILD_URL
    # A column counts cells (contracts), not tests: a contract may have several tests.
    contracts = json.loads(record.read_text())["contracts"].values()
    assert column["counts"]["passed"] == sum(entry["outcome"] == "passed" for entry in contracts)
    annotation = (store / "annotations" / "support-matrix.md").read_text()
    assert annotation == (site / "matrix.md").read_text()
    assert (site / "index.html").is_file()
