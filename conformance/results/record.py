"""Writing a result record: incrementally, atomically, never losing a finished test.

After every finished test the whole record is written to a temporary file beside the
target and renamed over it. A rename is atomic, so whoever reads the path - or finds
it after the run was killed with SIGKILL - sees either the previous or the new
version, each a valid record; ``complete`` stays false until ``finish``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
from pathlib import Path

from conformance.results import outcomes

SCHEMA_VERSION = 1


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclasses.dataclass(frozen=True)
class RecordedTest:
    """One test's entry in a record."""

    nodeid: str
    contract: str | None
    outcome: str
    duration: float
    message: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in outcomes.OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r} for {self.nodeid}")


def roll_up_contracts(tests: list[dict]) -> dict[str, dict]:
    """Per-contract outcome and counts, from the record's test entries."""
    by_contract: dict[str, list[str]] = {}
    for test in tests:
        if test["contract"] is not None:
            by_contract.setdefault(test["contract"], []).append(test["outcome"])
    return {
        contract: {"outcome": outcomes.roll_up(seen), "counts": outcomes.count(seen)}
        for contract, seen in sorted(by_contract.items())
    }


class RecordWriter:
    """Builds one record and keeps the file at ``path`` current after every change."""

    def __init__(self, path: str | os.PathLike, provenance: dict) -> None:
        self.path = Path(path)
        self.provenance = {**provenance, "started_at": utc_now(), "finished_at": None}
        self.tests: list[dict] = []
        self.complete = False
        self.exit_status: int | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write()

    def add(self, result: RecordedTest) -> None:
        self.tests.append(dataclasses.asdict(result))
        self._write()

    def finish(self, exit_status: int) -> None:
        self.provenance["finished_at"] = utc_now()
        self.exit_status = int(exit_status)
        self.complete = True
        self._write(durable=True)

    def as_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "complete": self.complete,
            "exit_status": self.exit_status,
            "provenance": self.provenance,
            "tests": self.tests,
            "contracts": roll_up_contracts(self.tests),
            "summary": outcomes.count(t["outcome"] for t in self.tests),
        }

    def _write(self, durable: bool = False) -> None:
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(self.as_dict(), file, indent=1)
            file.write("\n")
            if durable:
                # Survive a power cut, not just a killed process: once, at the end.
                file.flush()
                os.fsync(file.fileno())
        os.replace(temporary, self.path)
