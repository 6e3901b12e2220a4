"""`conformance pipeline` as a user runs it: the output, and one line per mistake."""

from __future__ import annotations

import json

import pytest
import yaml
from ci_helpers import EXAMPLE_FLEET, conformance, pipeline_json, write_fleet

from conformance.ci.buildkite.validate import problems

DEVICE = '[[device]]\nname = "npu"\nplatform = "my_npu"\nqueue = "npu"\n'


def test_flags_describe_one_device():
    pipeline = pipeline_json("--platform", "my_npu", "--queue", "npu", "--tag", "device=910b",
                             "--suite", "platform", "--suite", "attention",
                             "--device-count", "2", "--timeout", "30")
    assert problems(pipeline) == []
    device = pipeline["steps"][0]
    assert device["key"] == "conformance-my_npu"
    assert device["agents"] == {"queue": "npu", "device_count": "2", "device": "910b"}
    assert device["timeout_in_minutes"] == 30
    assert "--suite platform,attention" in " ".join(device["commands"])


def test_yaml_is_the_default_and_says_the_same_as_json():
    result = conformance("pipeline", "--fleet", str(EXAMPLE_FLEET))
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == pipeline_json("--fleet", str(EXAMPLE_FLEET))
    assert result.stdout.startswith("steps:\n")


def test_retired_devices_are_named_on_stderr():
    result = conformance("pipeline", "--fleet", str(EXAMPLE_FLEET), "--format", "json")
    assert "no step for retired device 'cuda-a100' (queue 'gpu-a100')" in result.stderr
    assert "cuda-a100" not in result.stdout and json.loads(result.stdout)


def test_collector_queue_flag_overrides_the_fleets():
    pipeline = pipeline_json("--fleet", str(EXAMPLE_FLEET), "--collector-queue", "small")
    assert pipeline["steps"][-1]["agents"] == {"queue": "small"}


@pytest.mark.parametrize("text, complaint", [
    ("[[device]\n", "not valid TOML"),
    (DEVICE + "timout_in_minutes = 5\n", "unknown field 'timout_in_minutes'"),
    (DEVICE + "timeout_in_minutes = \"30\"\n", "timeout_in_minutes must be an integer"),
    (DEVICE + "timeout_in_minutes = true\n", "timeout_in_minutes must be an integer"),
    (DEVICE + "device_count = 0\n", "device_count must be an integer from 1"),
    (DEVICE + "suites = []\n", "suites must be a non-empty list"),
    (DEVICE + "soft_fail = \"yes\"\n", "soft_fail must be true or false"),
    (DEVICE + "promote_when = \"soon\"\n", "promote_when is only for a soft_fail device"),
    (DEVICE + DEVICE, "two devices are named 'npu'"),
    (DEVICE + "retired = true\n", "every device is retired"),
    (DEVICE + DEVICE.replace('"npu"\nplatform', '"old"\nplatform') + "retired = true\n",
     "device 'npu' targets queue 'npu', which device 'old' marks retired"),
    ('queue = "x"\n' + DEVICE, "unknown top-level key 'queue'"),
    ("", "no [[device]] table"),
    ('[[device]]\nname = "npu"\nqueue = "npu"\n', "missing field 'platform'"),
])
def test_bad_fleet_files_are_one_line_errors(text, complaint, tmp_path):
    path = write_fleet(tmp_path, text)
    result = conformance("pipeline", "--fleet", str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"conformance pipeline: {path}")
    assert len(result.stderr.splitlines()) == 1 and complaint in result.stderr, result.stderr


def test_a_fleet_file_and_device_flags_do_not_mix():
    result = conformance("pipeline", "--fleet", str(EXAMPLE_FLEET), "--queue", "npu")
    assert result.returncode == 2
    assert "--queue is for one device without a fleet file" in result.stderr


def test_gate_needs_devices_and_annotate_a_readable_file(tmp_path):
    for args, complaint in ((["gate", "results"], "name the devices"),
                            (["annotate", "nowhere.md", "--context", "x"], "cannot read")):
        result = conformance("pipeline", *args, cwd=tmp_path)
        assert result.returncode == 2 and complaint in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_outside_a_job_the_missing_agent_is_one_line(tmp_path):
    (tmp_path / "m.md").write_text("# matrix\n")
    result = conformance("pipeline", "annotate", "m.md", "--context", "support-matrix",
                         cwd=tmp_path, env={"PATH": "/nonexistent"})
    assert result.returncode == 2
    assert result.stderr == ("conformance pipeline: buildkite-agent is not on PATH (this "
                             "command runs inside a Buildkite job)\n")
