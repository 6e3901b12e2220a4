"""Run the kit against several plugins in one process, one pytest session each.

``python -m batch_runner PLAN.json`` does, for each run of the plan, what a fresh
``python -m pytest ARGS`` in the run's own folder would: same arguments, same folder,
output to ``output.txt`` and the exit status to ``returncode`` there. It pays the
interpreter's, torch's and the suites' start-up once instead of once per plugin. The
sessions share nothing a run depends on: the plugin under test is resolved per
session (``pytest --platform``), the Hypothesis profiles keep no example database and
are derandomised, and each session seeds what it draws.

A plan is ``{"runs": [{"name": ..., "folder": ..., "args": [...]}, ...]}``.
"""

from __future__ import annotations

import contextlib
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


def run(name: str, folder: Path, args: list[str]) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    with _working_folder(folder), _output_to(folder / "output.txt"):
        returncode = int(pytest.main(args))
    (folder / "returncode").write_text(str(returncode))
    print(f"{name}: exit {returncode}", flush=True)
    return returncode


def main(plan_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    for entry in plan["runs"]:
        run(entry["name"], Path(entry["folder"]), entry["args"])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
