"""Fixtures of the kit's own tests: installed test plugins and a way to run the kit."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from pathlib import Path

import patience
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


def pytest_sessionstart(session) -> None:
    """The tests that interrupt a run stand in for Ctrl-C at a terminal, where the run
    has SIGINT's default disposition. A test session started in the background by a
    script (``bash .ci/run &``, ``nohup``) has SIGINT ignored, which ``exec`` passes to
    every run it starts, so those runs would rightly go on through the test's Ctrl-C.
    Each test process takes the default back (at session start: an xdist worker ignores
    SIGINT while it starts), and the runs it starts inherit it."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: Fixtures that start kit runs in child processes: a test using one is a ``kit_run``
#: test (seconds to minutes each), left out of the fast loop
#: ``-m "not kit_run and not requires_vllm"`` (a ``-m`` of one's own replaces the
#: ``not requires_vllm`` of pyproject's addopts).
KIT_RUN_FIXTURES = frozenset({"run_kit", "run_kit_batch", "kit"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Mark the ``kit_run`` tests (before ``-m`` selects by marks) and order them so
    that under ``-n N`` every worker starts on its share of them."""
    for item in items:
        if KIT_RUN_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.kit_run)
    items[:] = _spread_kit_runs(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def _spread_kit_runs(items: list, workers: int) -> list:
    """xdist's worksteal scheduler hands each of N workers one contiguous Nth of the
    items, and an idle worker later steals the tail of a busy one's queue. So each
    Nth starts with every Nth kit run (batches of plugins, the heaviest, first) and
    is filled up with short tests: no worker is left finishing long runs alone while
    the other has only short ones to steal. Every worker computes the same order."""
    kit_runs = sorted((item for item in items if item.get_closest_marker("kit_run")),
                      key=lambda item: "run_kit_batch" not in item.fixturenames)  # stable
    short = [item for item in items if not item.get_closest_marker("kit_run")]
    groups = _sharing_setup(kit_runs)
    share = -(-len(items) // workers)
    ordered = []
    for worker in range(workers):
        long = [item for group in groups[worker::workers] for item in group]
        fill = max(0, min(len(short), share * (worker + 1) - len(ordered) - len(long)))
        ordered += long + short[:fill]
        del short[:fill]
    return ordered + short


def _sharing_setup(kit_runs: list) -> list[list]:
    """The kit runs in groups that go to one worker: the tests of a module sharing a
    module-scoped fixture (a simulated CI build, a benchmarked record: a minute of
    kit runs) are one group, or each worker that gets one of them builds it again;
    every other test is a group of its own."""
    groups: list[list] = []
    by_module: dict[str, list] = {}
    for item in kit_runs:
        info = getattr(item, "_fixtureinfo", None)
        shared = info is not None and any(
            definitions and definitions[-1].scope == "module" for definitions in info.name2fixturedefs.values())
        if not shared:
            groups.append([item])
        elif item.path in by_module:
            by_module[item.path].append(item)
        else:
            by_module[item.path] = [item]
            groups.append(by_module[item.path])
    return groups


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


RECORD_NAME = "run.record.json"


@pytest.fixture
def run_kit(tmp_path, kit_env):
    """Run ``python -m pytest ARGS`` (or another module) in an empty folder, as a
    plugin author would, and return the outcome with its record (``run.record.json``
    in that folder). The child is waited on while its output or record grows."""

    def run(*args: str, module: str = "pytest", env: dict | None = None) -> KitRun:
        done = patience.run_watched([sys.executable, "-m", module, *args], tmp_path / "streams",
                                    watched=[tmp_path / RECORD_NAME], cwd=tmp_path, env=env or kit_env)
        return KitRun(done.returncode, done.stdout + done.stderr, tmp_path / RECORD_NAME)

    return run


@pytest.fixture
def run_kit_batch(tmp_path, kit_env):
    """``run_kit_batch({name: pytest args})``: each entry run as ``run_kit`` would,
    in a folder of its own, but all in one child process (``plugins/batch_runner.py``),
    which starts Python, torch and the suites once instead of once per plugin."""

    def run(runs: dict[str, list[str]]) -> dict[str, KitRun]:
        folders = {name: tmp_path / name for name in runs}
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"runs": [
            {"name": name, "folder": str(folders[name]), "args": [*args, f"--conformance-record={RECORD_NAME}"]}
            for name, args in runs.items()]}))
        watched = [p for folder in folders.values() for p in (folder / "output.txt", folder / RECORD_NAME)]
        done = patience.run_watched([sys.executable, "-m", "batch_runner", str(plan)], tmp_path / "streams",
                                    watched=watched, cwd=tmp_path, env=kit_env)
        assert done.returncode == 0, f"the batch runner failed:\n{done.stdout}{done.stderr}"
        return {name: KitRun(int((folder / "returncode").read_text()),
                             (folder / "output.txt").read_text(errors="replace"),
                             folder / RECORD_NAME)
                for name, folder in folders.items()}

    return run
