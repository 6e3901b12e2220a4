"""Result records made to order, valid for `conformance verify`, without running suites."""

from __future__ import annotations

from pathlib import Path

import conformance
from conformance._version import __version__
from conformance.results import RecordedTest, RecordWriter
from conformance.results.provenance import suite_hash
from conformance.results.verify import load_mustpass


def provenance(plugin: str = "cpu", device: str = "host cpu") -> dict:
    return {
        "kit_version": __version__,
        "contract_version": conformance.CONTRACT_VERSION,
        "suite_hash": suite_hash(),
        "plugin": {"name": plugin, "distribution": "conformance", "version": __version__,
                   "platform_class": "tests.Fake"},
        "device": {"type": "cpu", "name": device, "count": 1},
        "torch_version": "2.13.0", "python_version": "3.11", "command_line": ["test"],
        "host": {"hostname": "test-host", "os": "Linux", "machine": "x86_64"},
    }


def write_record(path: Path, outcomes: dict[str, str] | None = None, complete: bool = True,
                 message: str = "", **who: str) -> Path:
    """A record in which every mustpass contract passed, except those in ``outcomes``."""
    writer = RecordWriter(path, provenance(**who))
    for contract in load_mustpass():
        outcome = (outcomes or {}).get(contract, "passed")
        writer.add(RecordedTest(f"suite::{contract}", contract, outcome, 0.01,
                                message if outcome != "passed" else ""))
    if complete:
        writer.finish(0 if not outcomes else 1)
    return path
