"""Fixtures of the author kit's tests: installing a plugin package the way ``pip
install -e`` leaves it (a dist-info with its entry points, its sources on the path),
and running the kit as a plugin author would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import patience
import pytest
from plugins import catalogue

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "acme_npu"
TEST_PLUGINS = Path(__file__).resolve().parent


@pytest.fixture
def install(tmp_path):
    """``install(distribution, version, {entry point: target}, *source folders)``: the
    environment of a child process that sees the plugin as installed."""

    def installed(distribution: str, version: str, entry_points: dict[str, str],
                  *sources: Path) -> dict[str, str]:
        site = tmp_path / f"site-{distribution}"
        catalogue.write_distribution(site, distribution, version, entry_points)
        paths = [str(site), *map(str, sources), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
            env.pop(name, None)
        return env

    return installed


@pytest.fixture
def kit(tmp_path):
    """``kit(*args, env=..., cwd=...)``: run the ``conformance`` command in a child."""

    runs = iter(range(1_000_000))

    def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
            ) -> subprocess.CompletedProcess:
        return patience.run_watched([sys.executable, "-m", "conformance.cli", *args],
                                    tmp_path / f"kit-streams-{next(runs)}", cwd=cwd or tmp_path, env=env)

    return run
