"""The conformance command line."""

from __future__ import annotations

import collections
import json
import re

from conformance._version import __version__
from conformance.cli import main


def test_run_then_verify(run_kit, tmp_path):
    """``conformance run --platform cpu --record r.json -n 2``, from an empty folder,
    passes every contract of the built-in platform; its record holds each collected
    test exactly once (under xdist too), names the command, and ``conformance
    verify r.json`` accepts it; each suite is announced as it starts. (The kit's one whole run of ``cpu``: each whole run
    costs a minute of CI.)"""
    collected = run_kit("--platform=cpu", "--collect-only", "-q")
    nodeids = {line for line in collected.output.splitlines() if "::" in line}
    run = run_kit("run", "--platform", "cpu", "--record", "r.json", "-q", "-n", "2",
                  module="conformance.cli")
    assert run.returncode == 0, run.output
    assert f"CONFORMANT: cpu [conformance {__version__}]" in run.output
    # One heading per suite as it starts, with the run's progress (under -n 2 too).
    headings = re.findall(r"^(\w+) suite: (\d+) tests \((\d+) of (\d+) finished so far\)$", run.output, re.M)
    suites = collections.Counter(nodeid.split("/")[0] for nodeid in nodeids)
    assert {suite: int(size) for suite, size, _, _ in headings} == suites, run.output
    assert {int(total) for *_, total in headings} == {len(nodeids)}
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["provenance"]["command_line"][:4] == ["conformance", "run", "--platform", "cpu"]
    recorded = [t["nodeid"] for t in record["tests"]]
    assert len(recorded) == len(set(recorded)) and set(recorded) == nodeids
    assert set(record["summary"]) <= {"passed", "not_supported", "skipped"}, record["summary"]
    verify = run_kit("verify", "r.json", module="conformance.cli")
    assert verify.returncode == 0 and verify.output.startswith("CONFORMANT"), verify.output


def test_run_of_a_broken_plugin_is_not_conformant(run_kit):
    """A run of a broken plugin ends with a NOT CONFORMANT verdict and exit status 1."""
    run = run_kit("run", "--platform=constant_memory", "--suite=platform", "--record=r.json", "-q",
                  module="conformance.cli")
    assert run.returncode == 1
    assert "NOT CONFORMANT" in run.output and "platform.runtime.memory" in run.output


def test_verify_reports_the_worst_of_several_records(tmp_path, capsys):
    """``conformance verify A B`` prints one verdict per record and exits with the
    worst status."""
    broken = tmp_path / "broken.json"
    broken.write_text("not json")
    assert main(["verify", str(broken), str(tmp_path / "missing.json")]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.startswith("INVALID") for line in lines)


def test_plugins_lists_usable_and_unusable(capsys):
    """``conformance plugins`` lists every installed plugin and whether it is usable,
    and names the C kernel variant the cpu platform runs here."""
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "cpu platform's C kernel variant on this host: " in out
    assert f"cpu [conformance {__version__}]  usable" in out
    assert f"cuda [conformance {__version__}]  not usable" in out or f"cuda [conformance {__version__}]  usable" in out
