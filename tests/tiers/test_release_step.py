"""The release gate as a CI step: added by the fleet's ``release_records``, on release
branches only, after the collector; run as the agent runs it."""

from __future__ import annotations

import subprocess

import patience
from ci_helpers import agent_env, pipeline_json, step, upload_interpolation, write_fleet
from worked_example import write_example

FLEET = '''
collector_queue = "cpu"
release_records = "history of $(touch pwned)"

[[device]]
name = "cpu"
platform = "cpu"
queue = "cpu"
'''


def test_the_release_gate_step_blocks_on_the_official_platform(tmp_path):
    """Rule: the step runs after the collector (whatever its gate said) on release
    branches, reads the records' history from the checkout (its path quoted, never
    run), and fails annotating the platform that blocks the release."""
    pipeline = pipeline_json("--fleet", str(write_fleet(tmp_path, FLEET)))
    gate = step(pipeline, "conformance-release-gate")
    assert gate["if"] == "build.branch =~ /^release\\//"
    assert gate["depends_on"] == [{"step": "conformance-matrix", "allow_failure": True}]
    assert gate["agents"] == {"queue": "cpu"}

    checkout = tmp_path / "checkout"
    write_example(checkout / "history of $(touch pwned)")
    store = tmp_path / "agent"
    script = "\n".join(upload_interpolation(line, {}) for line in gate["commands"])
    run = subprocess.run(["bash", "-e", "-c", script], cwd=checkout, env=agent_env(store),
                         capture_output=True, text=True, timeout=patience.scaled(1800))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "is BLOCKED by 1 platform(s) at official or above" in run.stdout
    annotation = (store / "annotations" / "conformance-release.md").read_text()
    assert annotation.startswith("#### release\\-check\\: kit ")
    assert "| acme\\_npu on Acme NPU 2 \\[acme\\-npu\\] | official | blocks |" in annotation
    assert (store / "annotations" / "conformance-release.style").read_text() == "error"
    assert not (checkout / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_no_release_records_no_release_gate(tmp_path):
    """Rule: a fleet without ``release_records`` gets no release gate step."""
    pipeline = pipeline_json("--fleet", str(write_fleet(tmp_path, FLEET.replace(
        'release_records = "history of $(touch pwned)"\n', ""))))
    assert "conformance-release-gate" not in [s.get("key") for s in pipeline["steps"]]
