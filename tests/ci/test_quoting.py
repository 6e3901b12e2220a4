"""Hostile names and text from a fleet file, a flag or a record: each is refused with
one line, or reaches bash, YAML and Markdown as the literal text it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import patience
import pytest
import yaml
from ci_helpers import conformance, upload_interpolation, write_fleet

from conformance.ci import markdown
from conformance.ci.buildkite.pipeline import build_pipeline
from conformance.ci.fleet import load_fleet
from conformance.ci.names import FleetError
from conformance.ci.report import render_summary
from conformance.ci.verdicts import judge

HOSTILE = ["$(touch pwned)", "`touch pwned`", "x; rm -rf pwned", "a: b", "# note",
           "*alias", "&anchor", "it's \"quoted\"", "$HOME ${HOME} $$", "back\\slash",
           "grün ✓ 设备", "--help", "| pipe |"]
UNPRINTABLE = ["two\nlines", "carriage\rreturn", "tab\tbed", "nul\0byte"]

GOOD_DEVICE = {"name": "\"npu\"", "platform": "\"my_npu\"", "queue": "\"npu\""}


def fleet_text(**fields: str) -> str:
    lines = [f"{k} = {v}" for k, v in {**GOOD_DEVICE, **fields}.items()]
    return "[[device]]\n" + "\n".join(lines) + "\n"


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


@pytest.mark.parametrize("value", HOSTILE + UNPRINTABLE + ["", "a" * 64])
@pytest.mark.parametrize("field", ["name", "platform", "queue", "shared_device"])
def test_hostile_names_are_refused_in_one_line(field, value, tmp_path):
    path = write_fleet(tmp_path, fleet_text(**{field: toml_string(value)}))
    with pytest.raises(FleetError) as refused:
        load_fleet(path)
    message = str(refused.value)
    assert "\n" not in message and field in message and str(path) in message


@pytest.mark.parametrize("tags", ['{ "a b" = "x" }', '{ device = "x y" }',
                                  '{ device = "$(touch pwned)" }', '{ device = "a,b" }',
                                  '{ device = "*x" }', '{ queue = "other" }',
                                  '{ DEVICE = "x" }', '{ device = 3 }'])
def test_hostile_tags_are_refused(tags, tmp_path):
    with pytest.raises(FleetError, match="tag"):
        load_fleet(write_fleet(tmp_path, fleet_text(tags=tags)))


@pytest.mark.parametrize("value", UNPRINTABLE + [""])
def test_free_text_must_be_one_printable_line(value, tmp_path):
    text = fleet_text(soft_fail="true", promote_when=toml_string(value))
    with pytest.raises(FleetError, match="promote_when"):
        load_fleet(write_fleet(tmp_path, text))


def stand_in_conformance(folder):
    """A `conformance` first on PATH that logs its arguments, one JSON list a line."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    script = bin_dir / "conformance"
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      "with open(os.environ['ARGV_LOG'], 'a') as log:\n"
                      "    log.write(json.dumps(sys.argv[1:]) + '\\n')\n")
    script.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_free_text_reaches_the_commands_literally(value, tmp_path):
    text = fleet_text(soft_fail="true", promote_when=toml_string("official"),
                      expectations=toml_string(value))
    pipeline = build_pipeline(load_fleet(write_fleet(tmp_path, text)))
    # As Buildkite gets it: YAML, read back, interpolated from the uploader's environment.
    steps = yaml.safe_load(pipeline.to_yaml(sort_keys=False, allow_unicode=True,
                                            width=10_000))["steps"]
    uploader = {"HOME": "/uploader-home", "BUILDKITE_JOB_ID": "uploader-job"}
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    log = tmp_path / "argv.log"
    env = {**os.environ, "PATH": f"{stand_in_conformance(tmp_path)}{os.pathsep}"
           f"{os.environ['PATH']}", "ARGV_LOG": str(log), "BUILDKITE_JOB_ID": "job-7"}
    device_script = "\n".join(upload_interpolation(c, uploader) for c in steps[0]["commands"])
    gate_line = upload_interpolation(steps[1]["commands"][-1], uploader)
    for script in (device_script, gate_line):
        subprocess.run(["bash", "-e", "-c", script], cwd=job_dir, env=env, check=True,
                       timeout=patience.scaled(1800))
    run, report, gate = (json.loads(line) for line in log.read_text().splitlines())
    assert run[run.index("--expectations") + 1] == value
    assert run[run.index("--record") + 1] == "results/npu/job-7.record.json"
    assert report[:3] == ["pipeline", "report", "results/npu/job-7.record.json"]
    assert gate[gate.index("--soft-fail") + 1:] == ["npu", "official"]
    assert list(job_dir.iterdir()) == [] and not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("value", HOSTILE + UNPRINTABLE)
def test_hostile_record_strings_are_inert_in_the_annotation(value, tmp_path):
    from ci_records import write_record

    record = write_record(tmp_path / "r.record.json", plugin=value or "x",
                          device=f"<img src=x onerror=alert(1)> {value}")
    verdict = judge(record)
    body = render_summary("npu", record, verdict, 0)
    assert "<img" not in body and "<script" not in body
    if value in UNPRINTABLE:
        # A name holding a control character is refused (results/identity.py): the
        # annotation says INVALID on one line and never prints the name raw.
        assert verdict.word == "invalid" and value not in body, body
    else:
        assert markdown.text(value) in body
    for line in body.splitlines():
        if line.startswith("|"):  # every table row keeps its two columns
            assert line.replace("\\|", "").count("|") == 3


@pytest.mark.parametrize("value", ["tab\tin", "a\nb", "*emph*", "[link](javascript:x)",
                                   "<b>html</b>", "`code`", "| cell |", "# heading"])
def test_markdown_text_is_literal_and_on_one_line(value):
    escaped = markdown.text(value)
    assert "\n" not in escaped and "<" not in escaped
    assert all(ch not in escaped.replace("\\" + ch, "") for ch in "*[]`|#")


@pytest.mark.parametrize("flags, culprit", [
    (["--platform", "$(touch pwned)", "--queue", "q"], "--platform"),
    (["--platform", "cpu", "--queue", "a b"], "--queue"),
    (["--platform", "cpu", "--queue", "q", "--tag", "device"], "--tag"),
    (["--platform", "cpu", "--queue", "q", "--tag", "device=a;b"], "--tag"),
    (["--platform", "cpu", "--queue", "q", "--suite", "../x"], "--suite"),
    (["--platform", "cpu", "--queue", "q", "--soft-fail"], "--promote-when"),
    (["--platform", "cpu", "--queue", "q", "--promote-when", "x\ny", "--soft-fail"],
     "--promote-when"),
    (["--platform", "cpu", "--queue", "q", "--timeout", "0"], "--timeout"),
    (["--platform", "cpu", "--queue", "q", "--collector-queue", "`x`"], "--collector-queue"),
    (["--platform", "cpu"], "--queue"),
    (["--fleet", "nowhere.toml"], "nowhere.toml"),
])
def test_bad_flags_are_one_line_errors(flags, culprit, tmp_path):
    result = conformance("pipeline", *flags, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and culprit in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "pwned").exists()
