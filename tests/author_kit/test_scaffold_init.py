"""``conformance init``: a plugin package that starts green with the reference's
components, fails loudly on its stubs without them, and refuses bad input in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import patience
import pytest

ENTRY = {"acme": "acme_plugin:register"}


@pytest.mark.parametrize(("args", "complaint"), [
    (["--name", "9lives"], "--name '9lives' is not a Python identifier"),
    (["--name", "class"], "--name 'class' is not a Python identifier"),
    (["--name", "acme", "--device-type", "NPU!"], "--device-type 'NPU!' is not a torch device type"),
    (["--name", "acme", "--device-type", "xpu", "--from-reference"],
     "--from-reference needs --device-type cpu or cuda"),
])
def test_bad_input_is_one_line_and_writes_nothing(kit, tmp_path, args, complaint):
    run = kit("init", "plugin", *args)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and complaint in run.stderr, run.stderr
    assert not (tmp_path / "plugin").exists()


def test_refuses_an_existing_folder_that_is_not_empty(kit, tmp_path):
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "notes.txt").write_text("mine")
    run = kit("init", "plugin", "--name", "acme")
    assert run.returncode == 2
    assert run.stderr == "conformance init: plugin exists and is not empty: give a new or empty folder\n"
    assert [p.name for p in (tmp_path / "plugin").iterdir()] == ["notes.txt"]


def test_the_package_is_complete_and_lint_clean(kit, tmp_path):
    run = kit("init", "plugin", "--name", "acme")
    assert run.returncode == 0, run.stderr
    files = sorted(p.relative_to(tmp_path / "plugin").as_posix()
                   for p in (tmp_path / "plugin").rglob("*") if p.is_file())
    assert files == ["README.md", "acme_plugin/__init__.py", "acme_plugin/attention.py",
                     "acme_plugin/communicator.py", "acme_plugin/platform.py", "ci/fleet.toml",
                     "expectations.toml", "pyproject.toml", "tests/test_acme_platform.py"]
    # On cpu it says what torch.cpu lacks, and stubs exactly those methods.
    assert "torch.cpu lacks" in run.stdout and "memory_allocated (torch.cpu.memory_allocated)" in run.stdout
    platform = (tmp_path / "plugin" / "acme_plugin" / "platform.py").read_text()
    assert "class AcmePlatform(TorchDevicePlatform):" in platform
    assert "torch.cpu.memory_allocated is missing" in platform
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F,E,W,I,B",
                           "--line-length", "110", "plugin"], cwd=tmp_path, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout


def test_starts_green_with_the_reference_components(kit, install, tmp_path):
    """Rule: init --device-type cpu --from-reference, installed, runs the whole loop:
    conformance run is CONFORMANT, verify agrees, the plugin's own tests pass, the
    pipeline prints and the matrix builds."""
    made = kit("init", "acme", "--name", "acme", "--device-type", "cpu", "--from-reference")
    assert made.returncode == 0, made.stderr
    package = tmp_path / "acme"
    env = install("acme-platform-plugin", "0.1.0", ENTRY, package)
    run = kit("run", "--platform", "acme", "--expectations", "expectations.toml",
              "--record", "acme.record.json", env=env, cwd=package)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.splitlines()[-1].startswith("CONFORMANT: acme [acme-platform-plugin 0.1.0]")
    assert kit("verify", "acme.record.json", env=env, cwd=package).returncode == 0
    own = subprocess.run([sys.executable, "-m", "pytest", "--platform=acme", "tests", "-q"],
                         cwd=package, env=env, capture_output=True, text=True,
                         timeout=patience.scaled(1800))
    assert own.returncode == 0 and "2 passed" in own.stdout, own.stdout + own.stderr
    pipeline = kit("pipeline", "--fleet", "ci/fleet.toml", env=env, cwd=package)
    assert pipeline.returncode == 0 and "--platform" in pipeline.stdout and "acme" in pipeline.stdout, pipeline.stderr
    matrix = kit("matrix", "build", "acme.record.json", "-o", "site", env=env, cwd=package)
    assert matrix.returncode == 0, matrix.stderr
    assert "acme" in json.loads((package / "site" / "matrix.json").read_text()).__repr__()


def test_stubs_fail_the_attention_suite_naming_what_to_write(kit, install, tmp_path):
    """Rule: without --from-reference the attention stubs never pass: every Attention
    contract that computes fails with NotImplementedError naming the method to write."""
    assert kit("init", "acme", "--name", "acme").returncode == 0
    package = tmp_path / "acme"
    env = install("acme-platform-plugin", "0.1.0", ENTRY, package)
    run = kit("run", "--platform", "acme", "--suite", "attention", "--record", "a.json", env=env, cwd=package)
    assert run.returncode == 1, run.stdout[-3000:]
    record = json.loads((package / "a.json").read_text())
    outcomes = {c: r["outcome"] for c, r in record["contracts"].items()}
    # Accepting and refusing configurations, and the cache layout (the contract's
    # default), are written already; computing is not.
    written = {"attention.config.accepts_declared", "attention.config.refuses_undeclared",
               "attention.kv_cache.shape"}
    assert {c: outcomes.pop(c) for c in written} == dict.fromkeys(written, "passed")
    assert len(outcomes) >= 8 and set(outcomes.values()) == {"failed"}, outcomes
    for test in record["tests"]:
        if test["contract"] not in written:
            assert "AcmeAttentionImpl.forward: write paged attention" in test["message"], test
