"""Writing a result record: incrementally, atomically, never losing a finished test.

After every finished test the whole record is written to a temporary file beside the
target and renamed over it. A rename is atomic, so whoever reads the path - or finds
it after the run was killed with SIGKILL - sees either the previous or the new
version, each a valid record; ``complete`` stays false until ``finish``.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
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
    #: Declared capability values the test computed with, by dimension (the
    #: declaration's record view: ``{"dtypes": ["bfloat16"], "head_sizes": ["128"]}``).
    exercised: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    #: Declared values the test only handed to a config hook or selector, by dimension:
    #: checked, never computed with, so they verify no capability.
    config_checked: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.outcome not in outcomes.OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r} for {self.nodeid}")


#: Dimensions of a capability declaration whose every value some test must exercise.
COVERED_DIMENSIONS = ("dtypes", "head_sizes", "block_sizes", "kv_cache_dtypes", "features")


def capability_coverage(tests: list[dict], declared: object,
                        how: str = "exercised") -> dict[str, dict[str, list[str]]]:
    """For every declared value of ``COVERED_DIMENSIONS``, the contracts whose tests
    noted it as ``how`` (``exercised``: computed with it; ``config_checked``: only
    handed it to a config hook or selector). An empty list: declared, never noted so.
    ``declared`` is the record's view of the declaration; anything else (a plugin's
    error) covers nothing."""
    if not isinstance(declared, dict):
        return {}
    coverage = {dimension: {str(value): set() for value in declared.get(dimension, [])}
                for dimension in COVERED_DIMENSIONS}
    for test in tests:
        for dimension, values in test.get(how, {}).items():
            for value in values:
                if value in coverage.get(dimension, {}) and test["contract"] is not None:
                    coverage[dimension][value].add(test["contract"])
    return {dimension: {value: sorted(contracts) for value, contracts in values.items()}
            for dimension, values in coverage.items()}


def coverage_fields(tests: list[dict], declared: object) -> dict[str, dict]:
    """The record's two coverage fields: the contracts that computed with each declared
    value, and those that only config-checked it."""
    return {"capability_coverage": capability_coverage(tests, declared),
            "capability_config_checked": capability_coverage(tests, declared, "config_checked")}


def roll_up_contracts(tests: list[dict]) -> dict[str, dict]:
    """Per-contract outcome and counts, from the record's test entries."""
    by_contract: dict[str, list[str]] = {}
    for test in tests:
        if (contract := test["contract"]) is not None:
            if contract in by_contract:
                by_contract[contract].append(test["outcome"])
            else:
                by_contract[contract] = [test["outcome"]]
    rolled = {}
    for contract in sorted(by_contract):
        outcome, counts = _rolled_up(tuple(by_contract[contract]))
        rolled[contract] = {"outcome": outcome, "counts": dict(counts)}
    return rolled


# Verifying a record rolls up each of its contracts (300,000 times for the matrix
# benchmark), and contracts' tests end in a handful of patterns (one pass, mostly):
# each pattern is rolled up once. Counts are keyed by plain strings, whichever of
# the equal ``Outcome`` member or string first made the pattern.
@functools.lru_cache(maxsize=256)
def _rolled_up(ended: tuple[str, ...]) -> tuple[str, tuple[tuple[str, int], ...]]:
    tally: dict[str, int] = {}
    for outcome in ended:
        tally[outcome] = tally.get(outcome, 0) + 1
    return outcomes.roll_up(tally), tuple((str(o), n) for o, n in outcomes.in_order(tally).items())


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
            **coverage_fields(self.tests, self.provenance["device"].get("capabilities")),
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
