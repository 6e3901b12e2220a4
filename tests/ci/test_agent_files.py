"""The shipped agent files (ci/buildkite/agent/) agree with the pipeline and the hooks:
the agent's variable allow-list lets every variable the device step sets through and
none of the agent's own settings; the unit keeps an unhealthy agent down and empties
the agent's cgroup after each job; the settings file sets only what the hooks read."""

from __future__ import annotations

import re

from ci_helpers import REPO, pipeline_json, step, write_fleet

AGENT_FILES = REPO / "ci" / "buildkite" / "agent"
HOOKS = REPO / "ci" / "buildkite" / "hooks"
FLEET = """
[[device]]
name = "npu"
platform = "my_npu"
queue = "npu"
health_command = "npu-smi info"
shared_nodes = ["/dev/davinci_manager"]
"""


def settings(path) -> dict[str, str]:
    """``key=value`` lines (value quoted or not), comments left out."""
    found = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith(("#", "[")):
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip().strip('"')
    return found


def allow_list() -> list[str]:
    config = settings(AGENT_FILES / "agent-npu0.cfg")
    assert config["enable-environment-variable-allowlist"] == "true"
    return config["allowed-environment-variables"].split(",")


def allowed(variable: str) -> bool:
    return any(re.search(pattern, variable) for pattern in allow_list())


def variables_the_hooks_read() -> set[str]:
    return {name for hook in HOOKS.iterdir()
            for name in re.findall(r"\bCONFORMANCE_[A-Z_]+\b", hook.read_text())}


def test_every_pattern_of_the_allow_list_is_anchored():
    assert all(p.startswith("^") and p.endswith("$") for p in allow_list()), allow_list()


def test_the_allow_list_lets_through_every_variable_the_device_step_sets(tmp_path):
    pipeline = pipeline_json("--fleet", str(write_fleet(tmp_path, FLEET)))
    step_variables = set(step(pipeline, "conformance-npu")["env"])
    assert len(step_variables) == 4
    assert [name for name in sorted(step_variables) if not allowed(name)] == []


def test_no_setting_of_the_agent_can_be_set_by_a_job(tmp_path):
    """A pipeline that could set CONFORMANCE_DEVICE_NODES or the pre-flight's file
    could loosen the cleanup or forge the record's pre-flight."""
    pipeline = pipeline_json("--fleet", str(write_fleet(tmp_path, FLEET)))
    step_variables = set(step(pipeline, "conformance-npu")["env"])
    agents_own = variables_the_hooks_read() - step_variables
    assert {"CONFORMANCE_DEVICE_NODES", "CONFORMANCE_PREFLIGHT_FILE",
            "CONFORMANCE_JOB_MARKER"} <= agents_own
    assert [name for name in sorted(agents_own) if allowed(name)] == []


def test_the_settings_file_sets_only_what_the_hooks_read():
    names = {name for name in settings(AGENT_FILES / "env-npu0") if name.startswith("CONFORMANCE_")}
    assert names and names <= variables_the_hooks_read()


def test_the_unit_keeps_an_unhealthy_agent_down_and_empties_its_cgroup_after_each_job():
    unit = (AGENT_FILES / "buildkite-agent@.service").read_text()
    (down_while,) = re.findall(r"^ConditionPathExists=!(\S+)$", unit, re.MULTILINE)
    assert f"Environment=CONFORMANCE_UNHEALTHY_FILE={down_while}\n" in unit
    # docs/ci.md: systemd kills what a job left in the agent's cgroup when the agent
    # exits after its one job; the hooks' marker does not reach `env -i` processes.
    assert re.search(r"^KillMode=(mixed|control-group)$", unit, re.MULTILINE)
    assert re.search(r"^Restart=always$", unit, re.MULTILINE)
    config = settings(AGENT_FILES / "agent-npu0.cfg")
    assert config["disconnect-after-job"] == "true"
    assert config["cancel-signal"] == "SIGINT"  # conformance run's interrupt path
