"""Waiting on child processes by their progress, never by the clock alone.

The kit's own tests start kit runs, rank processes and agents in child processes. On a
busy machine each of them is slower by a factor nobody can know in advance, so a fixed
deadline fails a correct kit. Here a child is waited on for as long as it makes
progress (its output or record grows); it is stopped only once it has made none for
``STALL_S`` seconds, a hang by any measure. Every limit is multiplied by
``CONFORMANCE_TEST_TIME_FACTOR`` (default 1): set it above 1 on a machine that is
slower still (an emulator, a sanitizer build).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

#: Every limit below is multiplied by this (``CONFORMANCE_TEST_TIME_FACTOR``).
TIME_FACTOR = float(os.environ.get("CONFORMANCE_TEST_TIME_FACTOR", "1"))

#: How long a child may go without any progress before it is taken for hung. The
#: longest single test of a kit run (an engine suite generation under load) stays
#: well inside it.
STALL_S = 600.0


def scaled(seconds: float) -> float:
    return seconds * TIME_FACTOR


class NoProgress(AssertionError):
    """A child made no progress for the whole stall limit."""


def _footprint(paths: Iterable[Path]) -> tuple:
    footprint = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            footprint.append(None)
        else:
            footprint.append((stat.st_size, stat.st_mtime_ns))
    return tuple(footprint)


def wait_while_progressing(process: subprocess.Popen, watched: Iterable[Path],
                           stall_s: float = STALL_S, poll_s: float = 0.2) -> int:
    """The exit status of ``process``, waited on while any of ``watched`` changes.
    After ``stall_s`` (scaled) without a change the process group is killed and
    ``NoProgress`` raised."""
    watched = list(watched)
    limit = scaled(stall_s)
    last, since = _footprint(watched), time.monotonic()
    while True:
        try:
            return process.wait(timeout=poll_s)
        except subprocess.TimeoutExpired:
            pass
        now = _footprint(watched)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > limit:
            _kill(process)
            raise NoProgress(f"{process.args!r} made no progress for {limit:g} s "
                             f"(watching {', '.join(map(str, watched))})")


def wait_until(condition: Callable[[], bool], progress: Callable[[], object],
               stall_s: float = STALL_S, poll_s: float = 0.1) -> None:
    """Return once ``condition()`` holds; raise ``NoProgress`` once ``progress()``
    (any value that changes as the awaited work advances) has not changed for
    ``stall_s`` (scaled)."""
    limit = scaled(stall_s)
    last, since = progress(), time.monotonic()
    while not condition():
        time.sleep(poll_s)
        now = progress()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > limit:
            raise NoProgress(f"no progress for {limit:g} s (last seen: {now!r})")


def tests_recorded(record: Path) -> int:
    """How many tests a kit run's record holds so far: the progress of a run (0
    before the record exists)."""
    try:
        return len(json.loads(record.read_text())["tests"])
    except (OSError, ValueError):
        return 0


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, 9)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def run_watched(command: list[str], folder: Path, watched: Iterable[Path] = (),
                stall_s: float = STALL_S, **popen) -> subprocess.CompletedProcess:
    """Run ``command``, its standard output and error into ``stdout.txt`` and
    ``stderr.txt`` of ``folder``, and wait on it while they (or any of ``watched``)
    grow; what ``subprocess.run(..., capture_output=True, text=True)`` returns."""
    folder.mkdir(parents=True, exist_ok=True)
    streams = folder / "stdout.txt", folder / "stderr.txt"
    with open(streams[0], "w") as out, open(streams[1], "w") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   start_new_session=True, **popen)
        try:
            returncode = wait_while_progressing(process, [*streams, *watched], stall_s)
        except BaseException:
            if process.poll() is None:
                _kill(process)
            raise
    stdout, stderr = (path.read_text(errors="replace") for path in streams)
    return subprocess.CompletedProcess(command, returncode, stdout, stderr)
