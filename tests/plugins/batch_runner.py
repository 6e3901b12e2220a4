"""Run the kit against several plugins from one process, one pytest session each.

``python -m batch_runner PLAN.json`` does, for each run of the plan, what a fresh
``python -m pytest ARGS`` in the run's own folder would: same arguments, same folder,
output to ``output.txt`` and the exit status to ``returncode`` there. It imports
Python's, torch's and the kit's modules once, then forks a child per run: each
session starts from that same state, as a fresh process would, so nothing one
plugin's session leaves in a module (a cache, a seeded generator, a tensor a broken
plugin changed in place) reaches the next one's; only the start-up is shared.

A plan is ``{"runs": [{"name": ..., "folder": ..., "args": [...]}, ...]}``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from pathlib import Path

import pytest


@contextlib.contextmanager
def _output_to(path: Path):
    """Both standard streams, Python's and the file descriptors (rank processes and
    native code write to those), into ``path``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "w") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


@contextlib.contextmanager
def _working_folder(folder: Path):
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


#: What every session imports first, and what costs most of a fresh process's
#: start-up: imported once, before the first fork.
PRELOADED = ("torch", "hypothesis", "conformance.contract.platform", "conformance.reference_engine.llm",
             "conformance.pytest_plugin.reporting")


def run(name: str, folder: Path, args: list[str]) -> int:
    """One session in a forked child; its exit status."""
    folder.mkdir(parents=True, exist_ok=True)
    child = os.fork()
    if child == 0:
        returncode = 3  # pytest's "internal error", should the session itself raise
        try:
            with _working_folder(folder), _output_to(folder / "output.txt"):
                returncode = int(pytest.main(args))
        finally:
            os._exit(returncode)
    _, status = os.waitpid(child, 0)
    returncode = os.waitstatus_to_exitcode(status)
    (folder / "returncode").write_text(str(returncode))
    print(f"{name}: exit {returncode}", flush=True)
    return returncode


def main(plan_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    for module in PRELOADED:
        importlib.import_module(module)
    for entry in plan["runs"]:
        run(entry["name"], Path(entry["folder"]), entry["args"])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
