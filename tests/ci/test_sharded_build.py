"""A simulated build of two sharded devices on agents with the kit's hooks: one agent
fails its pre-flight, the job is retried by the step's own retry rules and lands on
another agent, each device's two shards upload one record each, and the collector
merges them into one record per device that ``conformance verify`` accepts and gates
the build on both. Also: a step cancelled mid-run still annotates its verdict.

Each job runs as the agent runs it: the step's commands and env after upload
interpolation, the `environment` and `pre-command` hooks sourced before them, the
artifacts uploaded after, then `pre-exit`, whatever happened before. An agent whose
pre-flight failed writes its unhealthy file and, as under the shipped systemd unit,
takes no more jobs. Seconds per job are printed (pytest -s shows them) and recorded
as a property of the test (in pytest's JUnit XML).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

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

# One suite keeps the test short; each device's verdict is then partial.
SHARDED = """
[[device]]
name = "{name}"
platform = "cpu"
queue = "{name}"
suites = ["platform"]
parallelism = 2
health_command = "vendor-smi"
"""
DEVICES = ("cpu-a", "cpu-b")
RUN = uuid.uuid4().hex[:8]


@dataclasses.dataclass(frozen=True)
class Agent:
    name: str
    settings: dict[str, str]  # the agent's own environment (its env-<i> file)


#: The agents of each queue, in the order they ask for work. The first of cpu-a's has
#: a broken device; cpu-b's run another driver, which their records must say.
AGENTS = {
    "cpu-a": [Agent("a-sick", {"STAND_IN_DEVICE_FAULT": "uncorrectable ECC errors"}),
              Agent("a-1", {}), Agent("a-2", {})],
    "cpu-b": [Agent("b-1", {"STAND_IN_DRIVER_VERSION": "10.1"}),
              Agent("b-2", {"STAND_IN_DRIVER_VERSION": "10.1"})],
}

#: The job as the agent's bootstrap runs it: pre-exit runs however the job ends (a
#: refused pre-command included), and the artifacts are uploaded after the command,
#: whatever it exited with.
JOB_SCRIPT = f"""
trap 'bash {HOOKS}/pre-exit' EXIT
source {HOOKS}/environment
source {HOOKS}/pre-command
status=0
bash -e -c "$CONFORMANCE_TEST_COMMANDS" || status=$?
while IFS= read -r pattern; do
    if compgen -G "$pattern" >/dev/null; then buildkite-agent artifact upload "$pattern"; fi
done <<< "$CONFORMANCE_TEST_ARTIFACTS"
exit "$status"
"""


def automatic_retry(job_step: dict, status: int, retries: int) -> bool:
    """Whether Buildkite retries a job of ``job_step`` that exited ``status`` after
    ``retries`` retries, by the step's own ``retry.automatic`` rules."""
    return any(rule.get("exit_status") == status and retries < rule["limit"]
               for rule in job_step["retry"]["automatic"])


def healthy(agent: Agent, root: Path) -> bool:
    """An agent with an unhealthy file is down (the unit's ConditionPathExists)."""
    return not (root / f"unhealthy-{agent.name}").exists()


def run_device_jobs(job_step: dict, device: str, root: Path, store: Path) -> list[dict]:
    """Every job of a sharded step, each on the next healthy agent of its queue,
    retried as the step says; one entry per job run."""
    agents = itertools.cycle(AGENTS[device])
    commands = "\n".join(upload_interpolation(c, UPLOADER) for c in job_step["commands"])
    step_env = {k: upload_interpolation(v, UPLOADER) for k, v in job_step["env"].items()}
    runs = []
    for shard in range(job_step["parallelism"]):
        for retries in itertools.count():
            queue = itertools.islice(agents, len(AGENTS[device]))  # each agent once, at most
            agent = next((a for a in queue if healthy(a, root)), None)
            assert agent is not None, f"every agent of queue {device} is unhealthy"
            job_id = f"{RUN}-{device}-shard{shard + 1}-retry{retries}"
            checkout = root / job_id
            checkout.mkdir()
            environ = job_env(
                store, **agent.settings, **step_env, BUILDKITE_JOB_ID=job_id,
                BUILDKITE_STEP_KEY=job_step["key"], BUILDKITE_RETRY_COUNT=str(retries),
                BUILDKITE_AGENT_NAME=f"kit-test-{RUN}-{agent.name}",
                BUILDKITE_AGENT_META_DATA_QUEUE=device, BUILDKITE_PARALLEL_JOB=str(shard),
                BUILDKITE_PARALLEL_JOB_COUNT=str(job_step["parallelism"]),
                TMPDIR=str(root), CONFORMANCE_UNHEALTHY_FILE=str(root / f"unhealthy-{agent.name}"),
                CONFORMANCE_TEST_COMMANDS=commands,
                CONFORMANCE_TEST_ARTIFACTS="\n".join(job_step["artifact_paths"]))
            started = time.monotonic()
            status = subprocess.run(["bash", "-c", JOB_SCRIPT], cwd=checkout, env=environ,
                                    timeout=patience.scaled(1800)).returncode
            runs.append({"job": job_id, "agent": agent.name, "status": status,
                         "seconds": round(time.monotonic() - started, 1)})
            if not automatic_retry(job_step, status, retries):
                break
    return runs


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    root = tmp_path_factory.mktemp("sharded-build")
    fleet = "".join(SHARDED.format(name=name) for name in DEVICES)
    pipeline = pipeline_json("--fleet", str(write_fleet(root, fleet)))
    store = root / "agent"
    runs = {device: run_device_jobs(step(pipeline, f"conformance-{device}"), device, root, store)
            for device in DEVICES}
    started = time.monotonic()
    collector = run_job(step(pipeline, "conformance-matrix"), root / "collector",
                        job_env(store, BUILDKITE_JOB_ID=f"{RUN}-collector"))
    timings = {run["job"].removeprefix(f"{RUN}-"): run["seconds"]
               for device_runs in runs.values() for run in device_runs}
    timings["collector"] = round(time.monotonic() - started, 1)
    print(f"\nsimulated build of two sharded devices, seconds per job: {json.dumps(timings)}")
    return root, pipeline, store, runs, collector, timings


def shard_record(store: Path, job_id: str) -> dict:
    device = job_id.split("-shard")[0]
    path = store / "artifacts" / "results" / device / f"{RUN}-{job_id}.record.json"
    return json.loads(path.read_text())


def test_the_unhealthy_agent_is_retried_on_another_and_then_left_alone(build, record_property):
    root, pipeline, store, runs, _, timings = build
    record_property("seconds_per_job", json.dumps(timings))
    first, retry, *_ = runs["cpu-a"]
    assert (first["agent"], first["status"]) == ("a-sick", UNHEALTHY_EXIT)
    assert {"exit_status": UNHEALTHY_EXIT, "limit": 2} in step(pipeline, "conformance-cpu-a")["retry"]["automatic"]
    assert retry["agent"] == "a-1" and retry["job"].endswith("shard1-retry1")
    assert [run["agent"] for run in runs["cpu-a"]] == ["a-sick", "a-1", "a-2"]
    reason = (root / "unhealthy-a-sick").read_text()
    assert "the pre-flight failed" in reason and "unhealthy-a-1" not in os.listdir(root)
    # pre-exit removed every pre-flight file, the refused job's included
    assert not list(root.glob("conformance-preflight.*"))
    uploaded = os.listdir(store / "artifacts" / "results" / "cpu-a")
    assert not any("retry0" in name and "shard1" in name for name in uploaded)  # never ran


def test_every_shard_job_ran_once_and_reported_its_own_summary(build):
    _, _, store, runs, _, _ = build
    assert [run["agent"] for run in runs["cpu-b"]] == ["b-1", "b-2"]
    for device in DEVICES:
        assert [run["status"] for run in runs[device] if run["status"] != UNHEALTHY_EXIT] \
            == [NOT_CONFORMANT, NOT_CONFORMANT]
        for shard in (1, 2):
            body = (store / "annotations" / f"conformance-{device}-shard-{shard}.md").read_text()
            assert markdown.text(f"SHARD-PASSED: shard {shard}/2") in body


def test_each_record_holds_its_own_agents_preflight_and_attempt(build):
    """Written by the run itself: the record the job uploaded, not one changed after."""
    _, _, store, _, _, _ = build
    retried = shard_record(store, "cpu-a-shard1-retry1")
    assert retried["provenance"]["ci"]["retry_count"] == 1
    assert retried["provenance"]["ci"]["agent_name"] == f"kit-test-{RUN}-a-1"
    preflight = retried["provenance"]["device"]["preflight"]
    assert preflight["healthy"] is True and preflight["health_output"] == "driver 9.9, firmware 1.2\n"
    other = shard_record(store, "cpu-b-shard2-retry0")["provenance"]["device"]["preflight"]
    assert other["health_output"].startswith("driver 10.1")


def test_the_collector_merges_each_devices_shards_and_gates_the_build(build):
    _, _, store, _, collector, _ = build
    for device in DEVICES:
        merged_path = store / "artifacts" / "collected" / device / f"{device}.record.json"
        verdict = verify_record(merged_path)
        # NOT CONFORMANT only because one suite ran: not INVALID, not INCOMPLETE.
        assert verdict.exit_code == NOT_CONFORMANT and "required contracts never ran" in verdict.line
        merged = json.loads(merged_path.read_text())
        shards = merged["provenance"]["shards"]
        assert shards["count"] == 2 and shards["missing"] == []
        attempts = {r["index"]: (r["job_id"], r["retry_count"]) for r in shards["records"]}
        driver = "9.9" if device == "cpu-a" else "10.1"
        assert all(r["preflight"]["health_output"].startswith(f"driver {driver}")
                   and r["agent_name"].startswith(f"kit-test-{RUN}-") for r in shards["records"])
        retried = 1 if device == "cpu-a" else 0
        assert attempts == {1: (f"{RUN}-{device}-shard1-retry{retried}", retried),
                            2: (f"{RUN}-{device}-shard2-retry0", 0)}
        shard_tests = [{test["nodeid"] for test in
                        shard_record(store, job.removeprefix(f"{RUN}-"))["tests"]}
                       for job, _ in attempts.values()]
        assert all(shard_tests) and not set.intersection(*shard_tests)  # each test once
        assert len(merged["tests"]) == sum(map(len, shard_tests))
        assert (store / "meta-data" / f"conformance-verdict-{device}").read_text() == "not-conformant"
    assert collector == 1  # required devices, not conformant
    gate = (store / "annotations" / "conformance-gate.md").read_text()
    for device in DEVICES:
        assert f"| {markdown.text(device)} | required | {markdown.text('not-conformant')} |" in gate
    assert (store / "annotations" / "conformance-gate.style").read_text() == "error"


@pytest.mark.parametrize("signum, exit_status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
                         ids=["SIGTERM", "SIGINT"])
def test_a_cancelled_step_still_annotates_its_verdict(tmp_path, signum, exit_status):
    """The agent signals the job's process group on cancel and timeout: SIGTERM by
    default, SIGINT with the documented cancel-signal, which takes conformance run's
    Ctrl-C path. Either way the record is kept and the trap reports it."""
    fleet = SHARDED.format(name="cpu").replace("parallelism = 2\n", "")
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
    # Mid-run: once the record holds a test (or the run ended too soon to cancel).
    results = checkout / "results"
    patience.wait_until(lambda: patience.tests_recorded(record) > 0 or job.poll() is not None,
                        progress=lambda: (patience.tests_recorded(record), job.poll(),
                                          sorted(p.name for p in results.rglob("*"))))
    assert job.poll() is None, "the run ended before it could be cancelled"
    os.killpg(job.pid, signum)  # what the agent does on cancel or timeout
    assert job.wait(timeout=patience.scaled(1800)) == exit_status
    assert verify_record(record).exit_code == INCOMPLETE
    assert patience.tests_recorded(record) > 0  # the tests that ran are kept
    body = (store / "annotations" / "conformance-cpu.md").read_text()
    assert "INCOMPLETE" in body and f"exit status {exit_status}" in body
    assert (store / "meta-data" / "conformance-verdict-cpu").read_text() == "incomplete"
