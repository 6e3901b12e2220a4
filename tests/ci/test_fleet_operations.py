"""Fleet operations: priority, branch `if` filters and notify per device or for the
whole fleet, each checked against Buildkite's schema; and the Test Engine step, run
against a stand-in agent and curl, keeping the suite token out of the pipeline and
out of every command line."""

from __future__ import annotations

import os
import stat
import subprocess

import patience
import pytest
from ci_helpers import agent_env, conformance, pipeline_json, step, upload_interpolation, write_fleet
from test_end_to_end import UPLOADER

OPERATED = """
priority = 3
if = "build.branch == 'main'"
notify = [{ email = "ci@example.com" }, { webhook = "https://example.com/hook" }]
test_engine_secret = "CONFORMANCE_TEST_ENGINE_TOKEN"

[[device]]
name = "cpu"
platform = "cpu"
queue = "cpu"

[[device]]
name = "npu"
platform = "my_npu"
queue = "npu"
priority = 9
if = "build.source == 'schedule'"
notify = [{ slack = "#npu-ci" }]
"""
TOKEN = "bkua_0123456789abcdef"


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """The fleet's pipeline, as the CLI prints it after checking it against the schema."""
    return pipeline_json("--fleet", str(write_fleet(tmp_path_factory.mktemp("fleet"), OPERATED)))


def test_fleet_wide_priority_and_if_are_defaults_a_device_overrides(pipeline):
    cpu, npu = step(pipeline, "conformance-cpu"), step(pipeline, "conformance-npu")
    assert (cpu["priority"], cpu["if"]) == (3, "build.branch == 'main'")
    assert (npu["priority"], npu["if"]) == (9, "build.source == 'schedule'")


def test_notify_goes_to_its_step_or_to_the_whole_build(pipeline):
    assert step(pipeline, "conformance-npu")["notify"] == [{"slack": "#npu-ci"}]
    assert "notify" not in step(pipeline, "conformance-cpu")
    assert pipeline["notify"] == [{"email": "ci@example.com"},
                                  {"webhook": "https://example.com/hook"}]


def test_a_device_with_an_if_is_required_only_when_it_ran(pipeline):
    gate = step(pipeline, "conformance-matrix")["commands"][-1]
    assert "--conditional cpu" in gate and "--conditional npu" in gate
    assert "--required" not in gate


@pytest.mark.parametrize("text, complaint", [
    ('notify = [{ email = "x@example.com" }]', "device 1 (cpu): notify: {'email': "
                                                "'x@example.com'} must be one { KIND = \"target\" }"),
    ("priority = 1e3", "priority must be an integer from -1000 to 1000, not 1000.0"),
    ("priority = true", "priority must be an integer from -1000 to 1000, not True"),
    ('if = "a\\nb"', "device 1 (cpu): if 'a\\nb' must be one printable line of at most 500"),
])
def test_bad_operations_fields_are_one_line_errors(text, complaint, tmp_path):
    fleet = f'[[device]]\nname = "cpu"\nplatform = "cpu"\nqueue = "cpu"\n{text}\n'
    result = conformance("pipeline", "--fleet", str(write_fleet(tmp_path, fleet)))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert complaint in line


@pytest.mark.parametrize("name", ["TOKEN; curl evil", "$(id)", "a b", "1TOKEN"])
def test_a_secret_name_that_is_not_a_plain_name_is_refused(name, tmp_path):
    fleet = (f'test_engine_secret = "{name}"\n'
             '[[device]]\nname = "cpu"\nplatform = "cpu"\nqueue = "cpu"\n')
    result = conformance("pipeline", "--fleet", str(write_fleet(tmp_path, fleet)))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "test_engine_secret" in line


def test_the_test_engine_step_runs_after_every_device_and_never_fails_the_build(pipeline):
    upload = step(pipeline, "conformance-test-engine")
    assert upload["soft_fail"] is True
    assert upload["depends_on"] == [{"step": "conformance-cpu", "allow_failure": True},
                                    {"step": "conformance-npu", "allow_failure": True}]
    assert TOKEN not in str(pipeline)


def stand_in_curl(folder):
    """A curl that writes its arguments, one a line, and its stdin into ``folder``."""
    folder.mkdir()
    curl = folder / "curl"
    curl.write_text('#!/usr/bin/env bash\nn=$(ls "$CURL_CALLS" | wc -l)\n'
                    'printf \'%s\\n\' "$@" > "$CURL_CALLS/$n.argv"\n'
                    'cat > "$CURL_CALLS/$n.stdin"\n')
    curl.chmod(curl.stat().st_mode | stat.S_IEXEC)
    return folder


def test_the_token_reaches_curl_on_stdin_never_in_its_arguments(pipeline, tmp_path):
    store, calls, checkout = tmp_path / "agent", tmp_path / "calls", tmp_path / "job"
    for folder in (calls, checkout):
        folder.mkdir()
    junit = store / "artifacts" / "results" / "cpu" / "job-1.junit.xml"
    junit.parent.mkdir(parents=True)
    junit.write_text("<testsuites/>")
    (store / "secrets").mkdir()
    (store / "secrets" / "CONFORMANCE_TEST_ENGINE_TOKEN").write_text(TOKEN)
    environ = agent_env(store, CURL_CALLS=str(calls), BUILDKITE_BUILD_ID="build-1",
                        BUILDKITE_JOB_ID="job-te")
    environ["PATH"] = f"{stand_in_curl(tmp_path / 'bin')}{os.pathsep}{environ['PATH']}"
    script = "\n".join(upload_interpolation(c, UPLOADER)
                       for c in step(pipeline, "conformance-test-engine")["commands"])
    result = subprocess.run(["bash", "-e", "-c", script], cwd=checkout, env=environ,
                            capture_output=True, text=True, timeout=patience.scaled(1800))
    assert result.returncode == 0, result.stderr
    (argv,) = [path.read_text().splitlines() for path in calls.glob("*.argv")]
    (stdin,) = [path.read_text() for path in calls.glob("*.stdin")]
    assert TOKEN not in " ".join(argv) and TOKEN not in result.stdout + result.stderr
    assert stdin == f'header = "Authorization: Token token=\\"{TOKEN}\\""\n'
    assert ["--config", "-"] == argv[argv.index("--config"):argv.index("--config") + 2]
    assert "data=@results/cpu/job-1.junit.xml" in argv and "run_env[key]=build-1" in argv
    assert argv[-1] == "https://analytics-api.buildkite.com/v1/uploads"
