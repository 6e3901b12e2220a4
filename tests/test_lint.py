"""The linters, as tests: ruff's rules and import-linter's layers (both configured in
``pyproject.toml``) hold on the whole repository, and the layer check can fail."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import patience

REPO = Path(__file__).resolve().parent.parent


def _run(*command: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=patience.scaled(1800))


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    # import-linter finds the package on sys.path: the folder it runs in comes first.
    code = "import sys; sys.path.insert(0, '.'); from importlinter.cli import lint_imports_command; lint_imports_command()"
    return _run(sys.executable, "-c", code, "--no-cache", cwd=cwd)


def test_ruff_finds_nothing():
    """Rule: the repository passes the ruff rules pyproject.toml selects."""
    run = _run(sys.executable, "-m", "ruff", "check", "conformance", "tests", "bench", "examples")
    assert run.returncode == 0, run.stdout + run.stderr


def test_layers_are_kept():
    """Rule: each layer imports only the layers below it, the suites import each
    other nowhere, and the results package imports neither torch nor the engine."""
    run = _lint_imports(REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    """Rule: the layer check fails on an engine module that imports a suite."""
    shutil.copytree(REPO / "conformance", tmp_path / "conformance",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    executor = tmp_path / "conformance" / "reference_engine" / "executor.py"
    executor.write_text(executor.read_text() + "\nimport conformance.suites.support\n")
    run = _lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "conformance.reference_engine.executor -> conformance.suites.support" in run.stdout
