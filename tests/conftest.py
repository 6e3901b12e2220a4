"""Fixtures of the kit's own tests: installed test plugins and a way to run the kit."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from plugins import catalogue


def pytest_configure(config) -> None:
    """Under ``pytest -n N``, each worker and every process it starts (child kit runs,
    rank processes) gets its share of the cores as torch threads. The kit's shapes are
    small: two workers of two threads each on two cores make every op's thread barrier
    wait for a time slice, and a child attention-suite run took 3.6x longer so."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        import torch

        threads = max(1, (os.cpu_count() or 1) // workers)
        os.environ["OMP_NUM_THREADS"] = str(threads)
        torch.set_num_threads(threads)


#: Modules whose tests run whole suites in child processes (up to minutes each), by
#: their share of the run: collected first, so that under ``-n`` the long tests are
#: spread over the workers from the start and the short ones fill in after, instead
#: of one worker finishing a long one alone at the end.
LONG_RUNNING_MODULES = (
    "tests/test_plugin_catalogue.py",
    "tests/author_kit/",
    "tests/attention/test_cpu_backend.py",
    "tests/test_cli.py",
    "tests/test_harness_outcomes.py",
    "tests/performance/",
)


def pytest_collection_modifyitems(config, items) -> None:
    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, m in enumerate(LONG_RUNNING_MODULES) if path.startswith(m)),
                    len(LONG_RUNNING_MODULES))

    items.sort(key=rank)  # stable: each module keeps its own order


@dataclasses.dataclass
class KitRun:
    """A finished ``pytest --platform`` (or ``conformance``) run in a child process."""

    returncode: int
    output: str
    record_path: Path

    @property
    def record(self) -> dict:
        return json.loads(self.record_path.read_text())

    def contracts_with(self, *outcomes: str) -> set[str]:
        return {c for c, r in self.record["contracts"].items() if r["outcome"] in outcomes}


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory) -> Path:
    """A folder holding an installed distribution, ``kit-test-plugins``, that
    registers every test plugin of ``plugins/catalogue.py`` through a real entry point."""
    site = tmp_path_factory.mktemp("site")
    catalogue.write_distribution(site, "kit_test_plugins", "1.0", catalogue.all_entry_points())
    return site


@pytest.fixture
def kit_env(plugin_site) -> dict[str, str]:
    """The environment of a child run that sees the test plugins."""
    paths = [str(plugin_site), str(catalogue.PLUGIN_SOURCES), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    return env


@pytest.fixture
def run_kit(tmp_path, kit_env):
    """Run ``python -m pytest ARGS`` (or another module) in an empty folder, as a
    plugin author would, and return the outcome with its record."""

    def run(*args: str, module: str = "pytest", env: dict | None = None,
            timeout: float = 300) -> KitRun:
        record = tmp_path / "run.record.json"
        completed = subprocess.run(
            [sys.executable, "-m", module, *args],
            cwd=tmp_path, env=env or kit_env, capture_output=True, text=True,
            timeout=timeout,
        )
        return KitRun(completed.returncode, completed.stdout + completed.stderr, record)

    return run
