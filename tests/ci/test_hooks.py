"""The agent hooks under bash, against real processes: what a job leaves behind is
killed, a clean device is required to start, pre-exit never fails a job, and no
hook touches a process that is not its own agent's job.

Agent names are unique per test run, so two runs of these tests on one host (or an
agent of a real fleet there) never look like each other's leftovers."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import patience
import pytest
from ci_helpers import REPO

HOOKS = REPO / "ci" / "buildkite" / "hooks"
RUN = uuid.uuid4().hex[:12]
AGENT = f"kit-test-{RUN}-npu0"
OTHER_AGENT = f"kit-test-{RUN}-npu1"
JOB = {"BUILDKITE_AGENT_NAME": AGENT, "BUILDKITE_JOB_ID": "job-2"}
UNHEALTHY = 75


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for a parent that does not reap)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.fixture
def started():
    """Pids the test started; any still running at the end are killed."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("BUILDKITE", "CONFORMANCE"))}
    return {**base, **JOB, "CONFORMANCE_KILL_GRACE_SECONDS": "2", **extra}


def hook(name: str, environ: dict[str, str], hooks: Path = HOOKS) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(hooks / name)], env=environ, capture_output=True,
                          text=True, timeout=patience.scaled(1800))


def job(script: str, environ: dict[str, str]) -> subprocess.CompletedProcess:
    """A job as the agent runs it: the environment hook sourced, then the command."""
    return subprocess.run(["bash", "-c", f"source {HOOKS}/environment\n{script}"],
                          env=environ, capture_output=True, text=True, timeout=patience.scaled(1800))


def leave_behind(environ: dict[str, str], started: list[int]) -> list[int]:
    """Run a job that leaves a background process and one in a new session."""
    result = job("sleep 600 >/dev/null 2>&1 &\necho $!\n"
                 "setsid sleep 601 >/dev/null 2>&1 < /dev/null &\necho $!\n", environ)
    assert result.returncode == 0, result.stderr
    pids = [int(line) for line in result.stdout.split() if line.isdigit()]
    started.extend(pids)
    assert len(pids) == 2 and all(map(alive, pids))
    return pids


def test_pre_exit_kills_a_background_and_a_new_session_process(started):
    pids = leave_behind(env(), started)
    result = hook("pre-exit", env())
    assert result.returncode == 0
    assert not any(map(alive, pids)), result.stdout
    assert "stopping leftover processes" in result.stdout


def test_pre_exit_kills_a_process_that_ignores_sigterm(started):
    result = job("bash -c 'trap \"\" TERM; while :; do sleep 0.1; done' >/dev/null 2>&1 &"
                 "\necho $!", env())
    pid = int(result.stdout.split()[-1])
    started.append(pid)
    result = hook("pre-exit", env())
    assert result.returncode == 0
    assert not alive(pid)
    assert "ignored SIGTERM" in result.stdout


def test_a_process_that_survives_sigkill_is_named():
    # A process in uninterruptible sleep cannot be made without privileges, so the
    # library is told that the (nonexistent) pid never stops running.
    script = (f"source {HOOKS}/conformance-cleanup.bash\n"
              "conformance_alive() { true; }\nCONFORMANCE_KILL_SETTLE_SECONDS=0\n"
              "conformance_kill 999999999")
    result = subprocess.run(["bash", "-c", script], env=env(CONFORMANCE_KILL_GRACE_SECONDS="0"),
                            capture_output=True, text=True, timeout=patience.scaled(1800))
    assert result.returncode == 0, result.stderr
    assert "ignored SIGTERM: 999999999" in result.stdout
    assert "after SIGKILL (stuck in the kernel" in result.stdout
    assert result.stdout.rstrip().endswith(": 999999999")


def test_pre_exit_leaves_other_jobs_alone(started):
    other = leave_behind(env(BUILDKITE_AGENT_NAME=OTHER_AGENT, BUILDKITE_JOB_ID="job-9"),
                         started)
    assert hook("pre-exit", env()).returncode == 0
    assert all(map(alive, other))


@pytest.mark.parametrize("case", ["idle check fails", "no job id", "library missing"])
def test_pre_exit_exits_0_when_cleanup_fails(case, tmp_path, started):
    pids = leave_behind(env(), started)
    environ, hooks = env(), HOOKS
    if case == "idle check fails":
        environ["CONFORMANCE_DEVICE_IDLE_CHECK"] = "echo 'device 0: 300 MiB used'; exit 1"
    elif case == "no job id":
        del environ["BUILDKITE_JOB_ID"]
    else:
        hooks = tmp_path / "hooks"
        hooks.mkdir()
        shutil.copy(HOOKS / "pre-exit", hooks)
    result = hook("pre-exit", environ, hooks)
    assert result.returncode == 0, result.stdout + result.stderr
    if case == "idle check fails":
        assert "still in use" in result.stdout
        assert not any(map(alive, pids))


def test_environment_sets_the_visibility_variable_from_tags():
    result = job('echo "$CUDA_VISIBLE_DEVICES|$CONFORMANCE_JOB_MARKER"', env(
        BUILDKITE_AGENT_META_DATA_DEVICES="2+3",
        BUILDKITE_AGENT_META_DATA_DEVICE_ENV="CUDA_VISIBLE_DEVICES"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"2,3|{AGENT}:job-2"


def test_environment_without_device_tags_sets_only_the_marker():
    result = job('echo "${CUDA_VISIBLE_DEVICES-unset}|$CONFORMANCE_JOB_MARKER"', env())
    assert result.stdout.splitlines()[-1] == f"unset|{AGENT}:job-2"


@pytest.mark.parametrize("tags, complaint", [
    ({"DEVICES": "0"}, "go together"),
    ({"DEVICES": "0", "DEVICE_ENV": "X;touch pwned"}, "not a device-visibility variable"),
    ({"DEVICES": "0", "DEVICE_ENV": "PATH"}, "not a device-visibility variable"),
    ({"DEVICES": "0", "DEVICE_ENV": "LD_PRELOAD"}, "not a device-visibility variable"),
    ({"DEVICES": "0,1", "DEVICE_ENV": "CUDA_VISIBLE_DEVICES"}, "joined by '+'"),
    ({"DEVICES": "$(touch pwned)", "DEVICE_ENV": "CUDA_VISIBLE_DEVICES"}, "joined by '+'"),
])
def test_environment_refuses_bad_tags(tags, complaint, tmp_path):
    environ = env(**{f"BUILDKITE_AGENT_META_DATA_{k}": v for k, v in tags.items()})
    result = subprocess.run(["bash", "-c", f"source {HOOKS}/environment"], env=environ,
                            cwd=tmp_path, capture_output=True, text=True, timeout=patience.scaled(1800))
    assert result.returncode == 1
    assert complaint in result.stderr
    assert not (tmp_path / "pwned").exists()


def hold(node: Path | str, environ: dict[str, str], started: list[int]) -> int:
    """A process, in a session of its own, that holds ``node`` open and nothing else
    of this test's (no job marker unless ``environ`` has one)."""
    with open(node) as opened:
        process = subprocess.Popen(["sleep", "600"], stdin=opened, env=environ,
                                   start_new_session=True)
    started.append(process.pid)
    return process.pid


def marked(agent: str, job: str) -> dict[str, str]:
    """The environment of a process of ``agent``'s job ``job``."""
    return env(BUILDKITE_AGENT_NAME=agent, CONFORMANCE_JOB_MARKER=f"{agent}:{job}")


# The ids are fixed: the names hold this run's id, and xdist's workers must collect
# the same test ids.
@pytest.mark.parametrize("other_agent_name", [OTHER_AGENT, f"{AGENT}-x", f"{AGENT}:x"],
                         ids=["another-agent", "dash-suffix", "colon-suffix"])
def test_pre_command_stops_an_earlier_jobs_leftovers_but_no_one_elses(tmp_path, started,
                                                                      other_agent_name):
    """Another agent's job survives, even one whose agent's name begins with this
    agent's name (its marker begins with this agent's marker prefix)."""
    device = tmp_path / "npu0"
    device.write_text("")
    earlier = leave_behind(env(BUILDKITE_JOB_ID="job-1"), started)
    other_agent = leave_behind(env(BUILDKITE_AGENT_NAME=other_agent_name), started)
    result = hook("pre-command", env(CONFORMANCE_DEVICE_NODES=str(device)))
    assert result.returncode == 0, result.stderr
    assert not any(map(alive, earlier))
    assert all(map(alive, other_agent))


def test_a_device_holder_that_is_not_this_agents_job_is_named_and_left_alone(tmp_path, started):
    device = tmp_path / "npu0"
    device.write_text("")
    unmarked = hold(device, env(), started)
    neighbour = hold(device, marked(OTHER_AGENT, "job-7"), started)
    result = hook("pre-command", env(CONFORMANCE_DEVICE_NODES=str(device)))
    assert result.returncode == UNHEALTHY
    assert f"pid {unmarked} (no job marker) holds {device}" in result.stderr
    assert f"pid {neighbour} ({OTHER_AGENT}:job-7) holds {device}" in result.stderr
    assert alive(unmarked) and alive(neighbour)


def test_a_process_holding_only_a_shared_node_survives_every_hook(tmp_path, started):
    device = tmp_path / "npu0"
    device.write_text("")
    shared_holder = hold("/dev/null", env(), started)
    neighbour = hold("/dev/null", marked(OTHER_AGENT, "job-7"), started)
    environ = env(CONFORMANCE_DEVICE_NODES=str(device))
    assert hook("pre-command", environ).returncode == 0
    assert hook("pre-exit", environ).returncode == 0
    assert alive(shared_holder) and alive(neighbour)


@pytest.mark.parametrize("nodes", ["/dev/null*", "/dev/nvidia[0-9]", "relative/npu0",
                                   "/dev/../etc/passwd", "/dev/npu0 /dev/*"])
def test_a_pattern_or_odd_path_in_the_device_nodes_is_refused_not_expanded(nodes, started):
    shared_holder = hold("/dev/null", env(), started)
    result = hook("pre-command", env(CONFORMANCE_DEVICE_NODES=nodes))
    assert result.returncode == UNHEALTHY
    (line, *_) = [line for line in result.stderr.splitlines() if "CONFORMANCE_DEVICE_NODES" in line]
    assert "is not a plain device path" in line
    assert "stopping" not in result.stdout and alive(shared_holder)


@pytest.mark.parametrize("node, extra", [
    ("/dev/nvidiactl", {}), ("/dev/kfd", {}), ("/dev/nvidia-caps/nvidia-cap1", {}),
    ("/dev/davinci_manager", {}),
    ("/dev/vendor-ctl", {"CONFORMANCE_SHARED_NODES": "/dev/other /dev/vendor-ctl"}),
    ("/dev/vendor-ctl", {"CONFORMANCE_FLEET_SHARED_NODES": "/dev/vendor-ctl"}),
])
def test_a_node_every_job_holds_is_refused_as_a_device_node(node, extra):
    result = hook("pre-command", env(CONFORMANCE_DEVICE_NODES=f"/dev/npu0 {node}", **extra))
    assert result.returncode == UNHEALTHY
    assert f"'{node}' is shared by every job on this box" in result.stderr


def test_pre_command_refuses_a_job_while_the_devices_hold_memory():
    result = hook("pre-command", env(CONFORMANCE_DEVICE_IDLE_CHECK="exit 1"))
    assert result.returncode == UNHEALTHY
    assert "agent unhealthy, job refused" in result.stderr


def test_pre_command_on_a_clean_agent_lets_the_job_start():
    assert hook("pre-command", env(CONFORMANCE_DEVICE_IDLE_CHECK="exit 0")).returncode == 0


@pytest.mark.parametrize("slug, allowed", [("conformance", True), ("acme/conformance", True),
                                           ("untrusted", False)])
def test_pre_bootstrap_allows_only_listed_pipelines(slug, allowed, tmp_path):
    org, _, pipeline = slug.rpartition("/")
    job_env = tmp_path / "job.env"
    job_env.write_text(f'BUILDKITE_PIPELINE_SLUG="{pipeline}"\n'
                       f'BUILDKITE_ORGANIZATION_SLUG="{org or "acme"}"\n')
    result = hook("pre-bootstrap", env(BUILDKITE_ENV_FILE=str(job_env),
                                       CONFORMANCE_ALLOWED_PIPELINES="acme/conformance tools"))
    assert (result.returncode == 0) is allowed, result.stderr


@pytest.mark.parametrize("allowed", ["*", "acme/*", "acme/conformance untrusted?"])
def test_pre_bootstrap_refuses_a_pattern_in_the_allow_list_instead_of_globbing_it(allowed,
                                                                                   tmp_path):
    """Expanded unquoted, "*" would glob into the working directory's file names, and a
    file named like the job's pipeline would let that pipeline in."""
    (tmp_path / "untrusted").write_text("")
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "untrusted").write_text("")
    job_env = tmp_path / "job.env"
    job_env.write_text('BUILDKITE_PIPELINE_SLUG="untrusted"\nBUILDKITE_ORGANIZATION_SLUG="acme"\n')
    result = subprocess.run(["bash", str(HOOKS / "pre-bootstrap")], cwd=tmp_path,
                            env=env(BUILDKITE_ENV_FILE=str(job_env),
                                    CONFORMANCE_ALLOWED_PIPELINES=allowed),
                            capture_output=True, text=True, timeout=patience.scaled(1800))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert "is not an org/pipeline or pipeline slug (no patterns)" in line
