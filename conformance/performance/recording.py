"""Adding measured figures to a finished record without ever losing the record.

The figures are measured in a child process (``python -m conformance.performance``),
so a plugin that crashes, hangs or raises while being measured takes only that
process with it. The record gains its ``performance`` section only when the child
succeeded and the section is on the schema; the new record is written to a file
beside it and renamed over it, so a reader sees the old record or the new one, never
half of either. Nothing else in the record changes: its tests, roll-ups and suite
hash verify as before.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.results.reading import UnreadableRecord, read_record, schema_problems

#: How long measuring may take before it is given up (the defaults take well under
#: a minute on two cores; a device with a slow first compile needs more).
TIMEOUT_S = 900


class MeasuringFailed(Exception):
    """Measuring gave no section to add; the message says why, in one line."""


def measure_in_child(platform: str, timeout: float = TIMEOUT_S) -> dict:
    """The ``performance`` section measured for ``platform`` by a child process.
    Its progress lines pass through; its errors are kept to name the failure."""
    with tempfile.TemporaryDirectory(prefix="conformance-bench-") as folder:
        output = Path(folder) / "performance.json"
        command = [sys.executable, "-m", "conformance.performance", "--platform", platform,
                   "--output", str(output)]
        try:
            child = subprocess.run(command, stderr=subprocess.PIPE, text=True, errors="replace",
                                   timeout=timeout)
        except subprocess.TimeoutExpired:
            raise MeasuringFailed(f"it did not finish within {timeout:.0f} s") from None
        if child.returncode != 0:
            raise MeasuringFailed(_why(child.returncode, child.stderr))
        try:
            return json.loads(output.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MeasuringFailed(f"the measuring process wrote no readable figures ({exc})") from None


def _why(returncode: int, stderr: str) -> str:
    """One line: the child's last error line (a traceback ends with the exception),
    or the signal that killed it."""
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    if returncode < 0:
        killed = f"the measuring process was killed by {_signal_name(-returncode)}"
        return f"{killed} ({last})" if last else killed
    return last or f"the measuring process exited with status {returncode}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def add_section(record_path: Path, section: dict) -> None:
    """Rewrite the record at ``record_path`` with ``section`` as its ``performance``,
    atomically, refusing a section the schema does not take."""
    try:
        _, record = read_record(record_path)
    except UnreadableRecord as exc:
        raise MeasuringFailed(f"the record cannot be read back: {exc}") from None
    if not isinstance(record, dict):
        raise MeasuringFailed("the record is not a JSON object")
    updated = {**record, "performance": section}
    problems = schema_problems(updated)
    if problems:
        raise MeasuringFailed(f"the figures are off the record schema: {problems[0]}")
    temporary = record_path.with_name(f".{record_path.name}.{os.getpid()}.bench.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(updated, file, indent=1)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, record_path)
    finally:
        temporary.unlink(missing_ok=True)


def bench_record(record_path: str | os.PathLike, platform: str, timeout: float = TIMEOUT_S) -> bool:
    """Measure ``platform`` and add the figures to the record; print one line either
    way. Returns whether the record gained them."""
    record_path = Path(record_path)
    try:
        section = measure_in_child(platform, timeout)
        add_section(record_path, section)
    except MeasuringFailed as exc:
        print(f"conformance run --bench: measuring failed: {exc}; {record_path} is kept without "
              f"performance figures (python -m conformance.performance --platform {platform} "
              "shows the whole error)", file=sys.stderr)
        return False
    except KeyboardInterrupt:
        print(f"conformance run --bench: interrupted; {record_path} is kept without performance "
              "figures", file=sys.stderr)
        return False
    print(f"conformance run --bench: {len(section['figures'])} figures measured on "
          f"{section['device']} added to {record_path}")
    return True


#: ``conformance run --bench``'s help: what it measures (``headline.py`` has the detail).
HELP = ("after the suites, add the platform's headline figures to the record, measured in a "
        "child process by the code of bench/: engine output tok/s at batch 1 and 16 (the tiny "
        "model, 128 new tokens), decode-attention KV-read GB/s (16 x 2048 tokens), and "
        "all_reduce busbw at 16 MiB on 2 ranks where the platform allows; medians of a few "
        "repeats, well under a minute on two CPU cores. A failure to measure keeps the record "
        "without them")
