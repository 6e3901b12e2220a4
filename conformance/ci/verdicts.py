"""A device's verdict in CI: ``conformance verify`` on its record, or "missing".

Both the device step's report and the collector's gate ask this, so the words, the
annotation styles and the choice of record live here.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from conformance.results.verify import ALLOWED, CONFORMANT, verify_record

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
    """The verdict on the record at ``path`` (None or absent: no record)."""
    if path is None or not path.is_file():
        where = "" if path is None else f" at {path}"
        return DeviceVerdict(MISSING, f"MISSING: no record{where}")
    verdict = verify_record(path)
    record = None
    if verdict.valid:
        record = json.loads(path.read_text(encoding="utf-8"))
    return DeviceVerdict(WORDS[verdict.exit_code], verdict.line, record)


def device_record(results: Path, device_name: str) -> Path | None:
    """The device's record among the downloaded artifacts: its newest, should a
    retried job have left more than one."""
    records = sorted((results / device_name).glob("*.record.json"),
                     key=lambda p: p.stat().st_mtime)
    return records[-1] if records else None
