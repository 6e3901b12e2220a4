"""Generated pipelines for several fleets: valid for Buildkite, and shaped as the
device agents need (targeting, locks, retries, artifacts, the collector)."""

from __future__ import annotations

import pytest
import yaml
from ci_helpers import EXAMPLE_FLEET, write_fleet

from conformance.ci.buildkite.pipeline import build_pipeline
from conformance.ci.buildkite.scripts import UNHEALTHY_EXIT, collector_commands, device_commands
from conformance.ci.buildkite.validate import problems
from conformance.ci.fleet import load_fleet

ONE_DEVICE = """
[[device]]
name = "cpu"
platform = "cpu"
queue = "cpu"
"""

SEVERAL = """
collector_queue = "cpu"

[[device]]
name = "cpu"
platform = "cpu"
queue = "cpu"
suites = ["platform", "attention"]

[[device]]
name = "npu-910b"
platform = "my_npu"
queue = "npu"
tags = { device = "910b", firmware = "1.2" }
soft_fail = true
promote_when = "official"
timeout_in_minutes = 45

[[device]]
name = "a100"
platform = "cuda"
queue = "gpu-a100"
retired = true
retired_reason = "no agent since the box was returned"
"""

TENSOR_PARALLEL = """
[[device]]
name = "h200"
platform = "cuda"
queue = "gpu"
shared_device = "box1"

[[device]]
name = "h200-tp4"
platform = "cuda"
queue = "gpu"
device_count = 4
suites = ["communicator", "engine"]
shared_device = "box1"
"""

FLEETS = {"one device": ONE_DEVICE, "several": SEVERAL, "tensor parallel": TENSOR_PARALLEL}


@pytest.fixture(params=sorted(FLEETS))
def fleet(request, tmp_path):
    return load_fleet(write_fleet(tmp_path, FLEETS[request.param]))


def _pipeline(tmp_path, text):
    return build_pipeline(load_fleet(write_fleet(tmp_path, text))).to_dict()


def test_every_fleet_gives_a_valid_pipeline(fleet):
    pipeline = build_pipeline(fleet).to_dict()
    assert problems(pipeline) == []
    keys = [step["key"] for step in pipeline["steps"]]
    assert keys == [f"conformance-{d.name}" for d in fleet.active()] + ["conformance-matrix"]


def test_the_example_fleet_gives_a_valid_pipeline():
    assert problems(build_pipeline(load_fleet(EXAMPLE_FLEET)).to_dict()) == []


def test_yaml_output_reads_back_as_the_validated_pipeline(fleet):
    pipeline = build_pipeline(fleet)
    text = pipeline.to_yaml(sort_keys=False, allow_unicode=True, width=10_000)
    assert yaml.safe_load(text) == pipeline.to_dict()


def test_device_steps_target_agents_and_retry_only_lost_agents(tmp_path):
    npu = _pipeline(tmp_path, SEVERAL)["steps"][1]
    assert npu["agents"] == {"queue": "npu", "device_count": "1", "device": "910b",
                             "firmware": "1.2"}
    rules = npu["retry"]["automatic"]
    assert {"exit_status": -1, "limit": 2} in rules
    assert {"signal_reason": "agent_stop", "limit": 2} in rules
    assert {"exit_status": UNHEALTHY_EXIT, "limit": 2} in rules
    # No rule that matches an exit status a plugin can give: no "*", no 1, no 255
    # (a plugin's exit(-1)), no automatic: true. The unhealthy status the run itself
    # cannot give: the script reports it as 1.
    assert all(set(rule) == {"exit_status", "limit"}
               and rule["exit_status"] in (-1, UNHEALTHY_EXIT)
               or set(rule) == {"signal_reason", "limit"} for rule in rules)
    assert f"if [[ $$status == {UNHEALTHY_EXIT} ]]" in "\n".join(npu["commands"])
    assert npu["timeout_in_minutes"] == 45
    assert npu["soft_fail"] is True
    assert "cancel_on_build_failing" not in npu


def test_retired_devices_get_no_step_and_no_gate_entry(tmp_path):
    pipeline = _pipeline(tmp_path, SEVERAL)
    assert "conformance-a100" not in [s["key"] for s in pipeline["steps"]]
    assert "a100" not in " ".join(pipeline["steps"][-1]["commands"])


def test_shared_device_steps_hold_one_lock_and_tensor_parallel_asks_for_four(tmp_path):
    single, tp4, _ = _pipeline(tmp_path, TENSOR_PARALLEL)["steps"]
    for step in (single, tp4):
        assert step["concurrency"] == 1
        assert step["concurrency_group"] == "conformance/device/box1"
    assert tp4["agents"]["device_count"] == "4"
    assert "--suite communicator,engine" in " ".join(tp4["commands"])


def test_no_lock_without_a_shared_device(tmp_path):
    step = _pipeline(tmp_path, ONE_DEVICE)["steps"][0]
    assert "concurrency" not in step and "concurrency_group" not in step


def test_each_job_uploads_its_own_record_and_junit(tmp_path):
    fleet = load_fleet(write_fleet(tmp_path, SEVERAL))
    script = "\n".join(device_commands(fleet.devices[0]))
    assert '--record "results/cpu/${BUILDKITE_JOB_ID}.record.json"' in script
    assert '--junitxml "results/cpu/${BUILDKITE_JOB_ID}.junit.xml"' in script
    step = build_pipeline(fleet).to_dict()["steps"][0]
    assert step["artifact_paths"] == ["results/cpu/*"]


def test_device_script_runs_one_test_command_and_keeps_its_status(tmp_path):
    fleet = load_fleet(write_fleet(tmp_path, ONE_DEVICE))
    lines = device_commands(fleet.devices[0])
    assert lines[0] == "set -euo pipefail"
    assert sum(line.startswith("conformance run ") for line in lines) == 1
    assert lines[-1] == 'exit "$status"'


def test_collector_depends_on_every_device_allowing_failure_and_gates(tmp_path):
    pipeline = _pipeline(tmp_path, SEVERAL)
    collector = pipeline["steps"][-1]
    assert collector["depends_on"] == [
        {"step": "conformance-cpu", "allow_failure": True},
        {"step": "conformance-npu-910b", "allow_failure": True},
    ]
    assert collector["agents"] == {"queue": "cpu"}
    gate = collector_commands(load_fleet(write_fleet(tmp_path, SEVERAL)))[-1]
    assert gate == "conformance pipeline gate results --required cpu --soft-fail npu-910b official"
    assert ("conformance pipeline collect results --into collected --device cpu "
            "--device npu-910b") in collector["commands"]
    assert any(line.startswith("conformance matrix build collected -o site")
               for line in collector["commands"])
    assert collector["artifact_paths"] == ["site/**/*", "collected/*/*"]


def test_every_dollar_is_escaped_for_upload(tmp_path):
    for step in _pipeline(tmp_path, SEVERAL)["steps"]:
        for line in step["commands"]:
            assert "$" not in line.replace("$$", "")


def test_the_bootstrap_pipeline_is_valid_and_uploads_the_example_fleet():
    bootstrap = yaml.safe_load((EXAMPLE_FLEET.parent / "pipeline.yml").read_text())
    assert problems(bootstrap) == []
    (only,) = bootstrap["steps"]
    assert only["commands"] == [
        "set -euo pipefail",
        "conformance pipeline --fleet ci/buildkite/fleet.toml --format json "
        "| buildkite-agent pipeline upload",
    ]
