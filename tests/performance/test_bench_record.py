"""``conformance run --bench``: headline figures in the record, measured in a child
process, and a record that survives a plugin breaking while being measured.

No test asserts a timing: figures only have to be on the schema and positive."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import bench_plugins
import patience
import pytest
from plugins import catalogue

from conformance.matrix.performance import LABELS
from conformance.performance import headline, recording
from conformance.reference_engine.platforms.cpu import CpuPlatform
from conformance.results.reading import schema_problems

#: Runs the kit as a CI job would (minutes of CPU): not part of the fast loop.
pytestmark = pytest.mark.kit_run

#: A narrow selection of the platform suite, to keep the runs short.
NARROW = ("--suite", "platform", "-k", "platform.identity")


@pytest.fixture(scope="module")
def bench_env(tmp_path_factory) -> dict[str, str]:
    """An environment whose child processes see the platforms of ``bench_plugins``."""
    site = tmp_path_factory.mktemp("bench-site")
    catalogue.write_distribution(site, "bench_test_plugins", "1.0", bench_plugins.ENTRY_POINTS)
    paths = [str(site), str(Path(bench_plugins.__file__).parent), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    return env


def conformance(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=patience.scaled(3600))


def bench_run(platform: str, folder: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, Path]:
    record = folder / f"{platform}.record.json"
    return conformance("run", "--platform", platform, "--record", str(record), "--bench", *NARROW,
                       cwd=folder, env=env), record


def verdict_of(record: Path, env: dict[str, str]) -> tuple[int, str]:
    """``conformance verify``'s exit status and line, the record's path left out."""
    verified = conformance("verify", str(record), cwd=record.parent, env=env)
    return verified.returncode, verified.stdout.replace(str(record), "RECORD")


@pytest.fixture(scope="module")
def cpu_bench(tmp_path_factory, bench_env):
    folder = tmp_path_factory.mktemp("cpu-bench")
    run, record = bench_run("cpu", folder, bench_env)
    assert record.exists(), run.stdout + run.stderr
    return run, record


def test_the_record_gains_a_performance_section_on_the_schema(cpu_bench):
    """Rule: --bench adds the headline figures, measured on the device the record names."""
    run, record_path = cpu_bench
    record = json.loads(record_path.read_text())
    assert "performance" in record, run.stdout + run.stderr
    assert schema_problems(record) == []
    section = record["performance"]
    assert section["device"] == CpuPlatform.get_device_name() == record["provenance"]["device"]["name"]
    measured_at = datetime.datetime.fromisoformat(section["measured_at"])
    assert datetime.datetime.fromisoformat(record["provenance"]["finished_at"]) <= measured_at
    figures = {f["name"]: f for f in section["figures"]}
    assert set(figures) == set(headline.FIGURES)  # cpu declares every shape and a world of 2
    assert all(f["value"] > 0 for f in figures.values())
    assert figures[headline.BUSBW_16MB]["world_size"] == 2
    assert [f["unit"] for f in section["figures"]] == ["tok/s", "tok/s", "GB/s", "GB/s"]
    assert f"conformance run --bench: 4 figures measured on {section['device']}" in run.stdout


def test_verify_gives_the_same_verdict_with_the_figures(cpu_bench, bench_env, tmp_path):
    """Rule: the section changes nothing verify checks (suite hash, roll-ups, mustpass)."""
    run, record_path = cpu_bench
    with_figures = verdict_of(record_path, bench_env)
    record = json.loads(record_path.read_text())
    del record["performance"]
    without = tmp_path / "without.record.json"
    without.write_text(json.dumps(record))
    assert with_figures == verdict_of(without, bench_env)
    # A partial run (one suite, narrowed) is NOT CONFORMANT, never INVALID.
    assert with_figures[0] == 1 and with_figures[1].startswith("NOT CONFORMANT"), with_figures
    assert with_figures[1].replace("RECORD", str(record_path)) in run.stdout


def test_the_matrix_shows_the_figures_under_the_column(cpu_bench, bench_env, tmp_path):
    _, record_path = cpu_bench
    site = tmp_path / "site"
    built = conformance("matrix", "build", str(record_path), "-o", str(site), cwd=tmp_path, env=bench_env)
    assert built.returncode == 0, built.stdout + built.stderr
    [column] = json.loads((site / "matrix.json").read_text())["columns"]
    recorded = json.loads(record_path.read_text())["performance"]
    shown = column["performance"]
    assert (shown["device"], shown["measured_at"]) == (recorded["device"], recorded["measured_at"])
    assert [(f["name"], f["label"], f["value"], f["unit"]) for f in shown["figures"]] == [
        (f["name"], LABELS[f["name"]], f["value"], f["unit"]) for f in recorded["figures"]]
    assert f"on {recorded['device']}" in (site / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(("platform", "why"), [
    ("bench_raises", "RuntimeError: forward refused while being measured"),
    ("bench_killed", "killed by SIGKILL"),
])
def test_a_plugin_breaking_while_measured_keeps_the_record(platform, why, tmp_path, bench_env):
    """Rule: a measurement that raises, or a plugin that kills the process measuring it,
    leaves the record as the suites wrote it, with one line saying so."""
    run, record_path = bench_run(platform, tmp_path, bench_env)
    record = json.loads(record_path.read_text())
    assert "performance" not in record
    assert record["complete"] and record["summary"].get("passed"), record["summary"]
    assert schema_problems(record) == []
    failed = [line for line in run.stderr.splitlines() if line.startswith("conformance run --bench:")]
    assert len(failed) == 1, run.stderr
    assert "measuring failed" in failed[0] and why in failed[0] and str(record_path) in failed[0]
    assert "Traceback" not in run.stdout + run.stderr
    code, line = verdict_of(record_path, bench_env)
    assert code == run.returncode == 1 and line.startswith("NOT CONFORMANT"), (code, line)


def test_figure_names_are_the_ones_the_matrix_labels():
    assert set(headline.FIGURES) == set(LABELS)


def test_an_off_schema_section_is_refused_and_the_record_kept(tmp_path):
    record = tmp_path / "r.record.json"
    record.write_text('{"schema_version": 1}\n')  # off-schema already: the section must not be written
    before = record.read_bytes()
    section = {"device": "x", "measured_at": "2026-12-01T00:00:00+00:00",
               "figures": [{"name": "Bad Name", "value": -1, "unit": "GB/s"}]}
    with pytest.raises(recording.MeasuringFailed, match="off the record schema"):
        recording.add_section(record, section)
    assert record.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.record.json"]  # no temporary left behind


def test_figures_the_declarations_rule_out_are_named():
    class Narrow(CpuPlatform):
        capabilities = dataclasses.replace(CpuPlatform.capabilities, head_sizes=(64,), block_sizes=(32,))

    assert headline.undeclared(Narrow, 128, 16) == "the platform does not declare head size 128 or block size 16"
    assert headline.undeclared(CpuPlatform, 128, 16) is None
    assert headline.engine_model(Narrow) == ("tiny-h64", 32)
    assert headline.engine_model(CpuPlatform) == ("tiny", 16)
