"""The records shipped in ``matrix/records/``: they pass the review bot, and the
``cpu`` one is the current kit's."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.matrix.check import check_submissions
from conformance.results.provenance import suite_hash
from conformance.results.verify import CONFORMANT, verify_record

SUBMITTED = Path(__file__).resolve().parents[2] / "matrix" / "records"
CPU_RECORD = SUBMITTED / "cpu" / "cpu.record.json"
REGENERATE = f"regenerate it: conformance run --platform cpu --record {CPU_RECORD.relative_to(SUBMITTED.parents[1])}"


def test_the_submitted_records_pass_the_review_bot():
    count, problems = check_submissions(SUBMITTED)
    assert problems == []
    assert count >= 1


def test_the_cpu_record_is_made_by_the_installed_suites():
    record = json.loads(CPU_RECORD.read_text())
    assert record["provenance"]["suite_hash"] == suite_hash(), (
        f"{CPU_RECORD} was made by other suites than the installed ones; {REGENERATE}")
    verdict = verify_record(CPU_RECORD)
    assert verdict.exit_code == CONFORMANT, f"{verdict.line}; {REGENERATE}"
