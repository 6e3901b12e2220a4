"""A simulated build of a sharded device on agents with the kit's hooks: one agent
fails its pre-flight and the job runs again elsewhere, two shards upload one record
each, and the collector merges them into one record that ``conformance verify``
accepts. Also: a step cancelled mid-run still annotates its verdict.

Each job runs as the agent runs it: the step's commands and env after upload
interpolation, the `environment` and `pre-command` hooks sourced before them, the
artifacts uploaded after, then `pre-exit`. Timings are printed (pytest -s shows them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid

import patience
import pytest
from ci_helpers import pipeline_json, step, upload_interpolation, write_fleet
from test_end_to_end import UPLOADER, job_env, run_job
from test_hooks import HOOKS

from conformance.ci import markdown
from conformance.ci.buildkite.scripts import UNHEALTHY_EXIT
from conformance.results.verify import INCOMPLETE, NOT_CONFORMANT, verify_record

#: Runs the kit as a CI job would (minutes of CPU): not part of the fast loop.
pytestmark = pytest.mark.kit_run

SHARDED = """
[[device]]
name = "cpu"
platform = "cpu"
queue = "cpu"
suites = ["platform"]   # one suite keeps the test short; the verdict is then partial
parallelism = 2
health_command = "echo 'driver 9.9, firmware 1.2'"
"""
RUN = uuid.uuid4().hex[:8]


def hooked_job(job_step, checkout, environ, timings, name):
    """Run a device job with the agent hooks around it; returns its exit status."""
    checkout.mkdir()
    environ = {**environ, **{k: upload_interpolation(v, UPLOADER)
                             for k, v in job_step.get("env", {}).items()}}
    commands = "\n".join(upload_interpolation(c, UPLOADER) for c in job_step["commands"])
    script = (f"source {HOOKS}/environment\nsource {HOOKS}/pre-command\n"
              'bash -e -c "$CONFORMANCE_TEST_COMMANDS"')
    started = time.monotonic()
    status = subprocess.run(["bash", "-c", script], cwd=checkout, timeout=900,
                            env={**environ, "CONFORMANCE_TEST_COMMANDS": commands}).returncode
    for pattern in job_step["artifact_paths"]:
        if list(checkout.glob(pattern)):
            subprocess.run(["buildkite-agent", "artifact", "upload", pattern], cwd=checkout,
                           env=environ, check=True)
    subprocess.run(["bash", str(HOOKS / "pre-exit")], env=environ, check=True, timeout=patience.scaled(1800))
    timings[name] = round(time.monotonic() - started, 1)
    return status


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    root = tmp_path_factory.mktemp("sharded-build")
    pipeline = pipeline_json("--fleet", str(write_fleet(root, SHARDED)))
    device = step(pipeline, "conformance-cpu")
    store, timings, statuses = root / "agent", {}, {}
    jobs = [  # (job, shard index, agent, the agent's own environment)
        ("shard1-attempt1", 0, "sick", {"CONFORMANCE_DEVICE_IDLE_CHECK":
                                        "echo 'device 0: 900 MiB used'; exit 1"}),
        ("shard1-attempt2", 0, "healthy-a", {}),
        ("shard2", 1, "healthy-b", {}),
    ]
    for job, shard, agent, agent_settings in jobs:
        environ = job_env(store, BUILDKITE_JOB_ID=f"{RUN}-{job}",
                          BUILDKITE_STEP_KEY="conformance-cpu",
                          BUILDKITE_AGENT_NAME=f"kit-test-{RUN}-{agent}",
                          BUILDKITE_AGENT_META_DATA_QUEUE="cpu",
                          BUILDKITE_PARALLEL_JOB=str(shard), BUILDKITE_PARALLEL_JOB_COUNT="2",
                          TMPDIR=str(root), **agent_settings)
        statuses[job] = hooked_job(device, root / job, environ, timings, job)
    collector = step(pipeline, "conformance-matrix")
    started = time.monotonic()
    statuses["collector"] = run_job(collector, root / "collector",
                                    job_env(store, BUILDKITE_JOB_ID=f"{RUN}-collector"))
    timings["collector"] = round(time.monotonic() - started, 1)
    print(f"\nsimulated sharded build, seconds per job: {json.dumps(timings)}")
    return root, pipeline, store, statuses


def test_an_unhealthy_agent_ends_the_job_with_the_status_the_step_retries(build):
    _, pipeline, store, statuses = build
    assert statuses["shard1-attempt1"] == UNHEALTHY_EXIT
    rules = step(pipeline, "conformance-cpu")["retry"]["automatic"]
    assert {"exit_status": UNHEALTHY_EXIT, "limit": 2} in rules
    uploaded = {p.name for p in (store / "artifacts" / "results" / "cpu").iterdir()}
    assert not any("attempt1" in name for name in uploaded)  # it never ran the plugin


def test_each_shard_reports_its_own_summary_and_no_verdict(build):
    _, _, store, statuses = build
    assert statuses["shard1-attempt2"] == statuses["shard2"] == NOT_CONFORMANT
    for shard in (1, 2):
        body = (store / "annotations" / f"conformance-cpu-shard-{shard}.md").read_text()
        assert markdown.text(f"SHARD-PASSED: shard {shard}/2") in body
    assert (store / "meta-data" / "conformance-verdict-cpu").read_text() == "not-conformant"


def test_the_collector_merges_the_shards_into_one_verifiable_record(build):
    _, _, store, statuses = build
    merged_path = store / "artifacts" / "collected" / "cpu" / "cpu.record.json"
    verdict = verify_record(merged_path)
    # NOT CONFORMANT only because one suite ran: not INVALID, not INCOMPLETE.
    assert verdict.exit_code == NOT_CONFORMANT and "required contracts never ran" in verdict.line
    merged = json.loads(merged_path.read_text())
    shards = merged["provenance"]["shards"]
    assert shards["count"] == 2 and shards["missing"] == []
    assert {r["job_id"] for r in shards["records"]} == {f"{RUN}-shard1-attempt2", f"{RUN}-shard2"}
    shard_tests = [len(json.loads(p.read_text())["tests"])
                   for p in (store / "artifacts" / "results" / "cpu").glob("*.record.json")]
    assert len(shard_tests) == 2 and all(shard_tests)
    assert len(merged["tests"]) == sum(shard_tests)
    assert merged["provenance"]["device"]["preflight"]["health_output"].startswith("driver 9.9")
    assert statuses["collector"] == 1  # a required device, not conformant
    gate = (store / "annotations" / "conformance-gate.md").read_text()
    assert f"| cpu | required | {markdown.text('not-conformant')} |" in gate


def test_a_cancelled_step_still_annotates_its_verdict(tmp_path):
    fleet = SHARDED.replace("parallelism = 2\n", "")
    pipeline = pipeline_json("--fleet", str(write_fleet(tmp_path, fleet)))
    device = step(pipeline, "conformance-cpu")
    store, checkout = tmp_path / "agent", tmp_path / "job"
    checkout.mkdir()
    environ = job_env(store, BUILDKITE_JOB_ID=f"{RUN}-cancelled",
                      BUILDKITE_AGENT_NAME=f"kit-test-{RUN}-cancel")
    script = "\n".join(upload_interpolation(c, UPLOADER) for c in device["commands"])
    job = subprocess.Popen(["bash", "-e", "-c", script], cwd=checkout, env=environ,
                           start_new_session=True)
    record = checkout / "results" / "cpu" / f"{RUN}-cancelled.record.json"
    while not record.exists() and job.poll() is None:  # wait for progress, not a clock
        time.sleep(0.2)
    assert job.poll() is None, "the run ended before it could be cancelled"
    os.killpg(job.pid, signal.SIGTERM)  # what the agent does on cancel or timeout
    assert job.wait(timeout=patience.scaled(1800)) == 143
    assert verify_record(record).exit_code == INCOMPLETE
    body = (store / "annotations" / "conformance-cpu.md").read_text()
    assert "INCOMPLETE" in body and "exit status 143" in body
    assert (store / "meta-data" / "conformance-verdict-cpu").read_text() == "incomplete"
