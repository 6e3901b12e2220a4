"""The processes a kit run started, read from ``/proc`` (Linux): to prove that a run
stopped by a signal, however it is stopped, leaves none of them behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import patience
import pytest

#: How long a stopped run's processes may take to go: an outer limit on process exits,
#: not on work (scaled like every limit of the kit's tests).
GONE_S = 120.0

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads processes from /proc")


def _children() -> dict[int, set[int]]:
    children: dict[int, set[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            children.setdefault(int(fields[1]), set()).add(int(entry.name))
    return children


def descendants(pid: int) -> set[int]:
    """Every process under ``pid`` now: its children, theirs, and so on."""
    children, found, todo = _children(), set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (a zombie has ended: only its parent's wait is
    missing)."""
    running = set()
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.add(pid)
    return running


def _command(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return "<gone>"


def assert_all_gone(pids: set[int], after: str) -> None:
    """Wait while ``pids`` end; fail naming those left once none has ended for
    ``GONE_S``."""
    try:
        patience.wait_until(lambda: not alive(pids), lambda: len(alive(pids)), stall_s=GONE_S)
    except patience.NoProgress:
        left = {pid: _command(pid) for pid in alive(pids)}
        raise AssertionError(f"after {after}, still running: {left}") from None


def clean_up(run: subprocess.Popen, pids: set[int]) -> None:
    """Kill what a failed test left: ``run``'s process group and ``pids``."""
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    for pid in alive(pids):
        os.kill(pid, signal.SIGKILL)
