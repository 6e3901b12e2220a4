"""A device's verdict in CI: ``conformance verify`` on what speaks for it, or "missing".

Both a device job's report and the collector's gate ask this, so the words and the
annotation styles live here; which record speaks for a device is ``collect``'s.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from conformance.ci.collect import Collected, collect
from conformance.results.verify import ALLOWED, CONFORMANT, INVALID, verify_loaded, verify_record

#: The one-word verdicts stored as build meta-data, by ``conformance verify`` exit code.
WORDS = {0: "conformant", 1: "not-conformant", 2: "invalid", 3: "incomplete"}
MISSING = "missing"
STYLES = {"conformant": "success", "incomplete": "warning"}  # anything else: error


@dataclasses.dataclass(frozen=True)
class DeviceVerdict:
    word: str
    line: str
    record: dict | None = None  # the record's content when it is valid

    @property
    def conformant(self) -> bool:
        return self.word == WORDS[CONFORMANT]

    @property
    def style(self) -> str:
        return STYLES.get(self.word, "error")

    def contracts_not_passed(self) -> list[tuple[str, str]]:
        contracts = (self.record or {}).get("contracts", {})
        return [(contract, result["outcome"]) for contract, result in contracts.items()
                if result["outcome"] not in ALLOWED]


def judge(path: Path | None) -> DeviceVerdict:
    """The verdict on the one record at ``path`` (None or absent: no record)."""
    if path is None or not path.is_file():
        where = "" if path is None else f" at {path}"
        return DeviceVerdict(MISSING, f"MISSING: no record{where}")
    return judge_collected(Collected(str(path), path=path))


def judge_collected(collected: Collected | None) -> DeviceVerdict:
    """The verdict on what speaks for a device (None: nothing was found)."""
    if collected is None:
        return DeviceVerdict(MISSING, "MISSING: no record")
    if collected.error is not None:
        return DeviceVerdict(WORDS[INVALID], f"INVALID: {collected.source}: {collected.error}")
    record = collected.record
    if record is None:
        verdict = verify_record(collected.path)
        if verdict.valid:
            record = json.loads(collected.path.read_text(encoding="utf-8"))
    else:
        verdict = verify_loaded(record, collected.source)
    line = verdict.line
    if collected.ignored:
        line += f" (not used: {', '.join(collected.ignored)})"
    return DeviceVerdict(WORDS[verdict.exit_code], line, record if verdict.valid else None)


def device_verdict(results: Path, device_name: str) -> DeviceVerdict:
    """The verdict on the device's records among the downloaded artifacts."""
    return judge_collected(collect(results / device_name))
