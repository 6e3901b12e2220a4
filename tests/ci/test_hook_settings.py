"""The agent hooks' settings and pre-flight: numbers are numbers, a bad value is one
line naming it, an unhealthy agent ends the job with the status the pipeline
retries, and shellcheck finds nothing in any hook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import patience
import pytest
from test_hooks import HOOKS, UNHEALTHY, alive, env, hook, job, leave_behind, started  # noqa: F401


@pytest.mark.parametrize("value", ["abc", "1e3", "-1", "10s", "99999", "$(touch pwned)"])
def test_a_non_numeric_grace_period_is_one_line_refusing_the_job(value, tmp_path):
    result = subprocess.run(["bash", str(HOOKS / "pre-command")], cwd=tmp_path,
                            env=env(CONFORMANCE_KILL_GRACE_SECONDS=value),
                            capture_output=True, text=True, timeout=patience.scaled(1800))
    assert result.returncode == UNHEALTHY
    (line,) = [line for line in result.stderr.splitlines() if "GRACE" in line]
    assert f"CONFORMANCE_KILL_GRACE_SECONDS='{value}' must be a whole number" in line
    assert not (tmp_path / "pwned").exists()


def test_pre_exit_with_a_bad_grace_period_still_cleans_up_and_exits_0(started):  # noqa: F811
    pids = leave_behind(env(), started)
    result = hook("pre-exit", env(CONFORMANCE_KILL_GRACE_SECONDS="ten"))
    assert result.returncode == 0
    assert "must be a whole number" in result.stdout
    assert not any(map(alive, pids))


@pytest.mark.parametrize("variable", ["CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES",
                                      "NEURON_RT_VISIBLE_CORES", "ZE_AFFINITY_MASK"])
def test_environment_accepts_device_visibility_variables(variable):
    result = job(f'echo "${variable}"', env(BUILDKITE_AGENT_META_DATA_DEVICES="1",
                                            BUILDKITE_AGENT_META_DATA_DEVICE_ENV=variable))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "1"


def test_environment_accepts_the_one_name_the_agent_allows():
    environ = env(BUILDKITE_AGENT_META_DATA_DEVICES="0",
                  BUILDKITE_AGENT_META_DATA_DEVICE_ENV="MY_NPU_MASK")
    assert job("true", environ).returncode == 1
    environ["CONFORMANCE_EXTRA_DEVICE_ENV"] = "MY_NPU_MASK"
    result = job('echo "$MY_NPU_MASK"', environ)
    assert result.stdout.splitlines()[-1] == "0"


def preflight_env(tmp_path, **extra):
    return env(**{"CONFORMANCE_PLATFORM": "cpu", "TMPDIR": str(tmp_path),
                  "CONFORMANCE_UNHEALTHY_FILE": str(tmp_path / "unhealthy"), **extra})


def test_a_healthy_preflight_lets_the_job_start_and_records_what_it_found(tmp_path):
    script = (f"source {HOOKS}/pre-command\n"
              'cat "$CONFORMANCE_PREFLIGHT_FILE"')
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                            timeout=patience.scaled(1800),
                            env=preflight_env(tmp_path, CONFORMANCE_EXPECTED_DEVICES="1",
                                              CONFORMANCE_HEALTH_COMMAND="echo driver 1.2.3"))
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["healthy"] is True and found["found_devices"] == 1
    assert found["health_output"] == "driver 1.2.3\n"
    assert not (tmp_path / "unhealthy").exists()


@pytest.mark.parametrize("extra, reason", [
    ({"CONFORMANCE_EXPECTED_DEVICES": "2"}, "the platform sees 1 devices, the fleet expects 2"),
    ({"CONFORMANCE_EXPECTED_DEVICES": "1", "CONFORMANCE_HEALTH_COMMAND": "echo ECC errors; exit 3"},
     "the health command exited 3: ECC errors"),
])
def test_a_failed_preflight_is_an_unhealthy_agent_not_a_plugin_failure(extra, reason, tmp_path):
    result = hook("pre-command", preflight_env(tmp_path, **extra))
    assert result.returncode == UNHEALTHY
    assert f"agent unhealthy: {reason}" in result.stderr
    assert "the pre-flight failed" in (tmp_path / "unhealthy").read_text()


def test_a_preflight_file_the_job_names_itself_is_dropped(tmp_path):
    """Only the hook's own pre-flight reaches the record: a job (or a pipeline that
    sets the variable) cannot hand the run findings the agent never made."""
    forged = tmp_path / "forged.json"
    forged.write_text('{"healthy": true, "health_output": "driver 99"}')
    script = f'source {HOOKS}/pre-command\necho "${{CONFORMANCE_PREFLIGHT_FILE-unset}}"'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                            timeout=patience.scaled(1800),
                            env=preflight_env(tmp_path, CONFORMANCE_PREFLIGHT_FILE=str(forged)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "unset"


def test_a_plugin_that_does_not_load_is_left_to_the_run_to_report(tmp_path):
    result = hook("pre-command", preflight_env(tmp_path, CONFORMANCE_PLATFORM="no_such_plugin",
                                               CONFORMANCE_EXPECTED_DEVICES="1"))
    assert result.returncode == 0, result.stderr
    assert "not judged here, the run will report it" in result.stderr


def test_shellcheck_finds_nothing_in_any_hook():
    if shutil.which("shellcheck") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("shellcheck is not installed: CI must check the hooks "
                        "(apt-get install shellcheck)")
        pytest.skip("shellcheck is not installed here (CI installs it)")
    hooks = sorted(str(path) for path in HOOKS.iterdir())
    result = subprocess.run(["shellcheck", "--external-sources", *hooks],
                            capture_output=True, text=True, timeout=patience.scaled(1800))
    assert result.returncode == 0, result.stdout
