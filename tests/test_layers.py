"""The layers of DESIGN.md that the import linter cannot see: what is imported at run
time, where a device-free machine verifies records."""

from __future__ import annotations

import subprocess
import sys

import patience
import pytest

from conformance.contract.discovery import find_plugin, load_platform
from conformance.pytest_plugin.provenance import collect_provenance
from conformance.results.record import RecordedTest, RecordWriter

_NO_TORCH = """
import sys
import conformance, conformance.contract, conformance.contract.version, conformance.results
from conformance.cli import main
status = main(["verify", sys.argv[1]])
heavy = sorted(m for m in sys.modules
               if m == "torch" or m.startswith(("torch.", "conformance.reference_engine")))
print(status, heavy)
"""


@pytest.fixture
def finished_record(tmp_path):
    provenance = collect_provenance(find_plugin("cpu"), load_platform("cpu"), ["pytest"])
    writer = RecordWriter(tmp_path / "r.record.json", provenance)
    writer.add(RecordedTest("platform/test_x.py::test_y", "platform.identity.names", "passed", 0.1))
    writer.finish(0)
    return writer.path


def test_verify_runs_without_torch_or_the_engine(finished_record):
    """Rule: the contract package, the results package and `conformance verify` import
    neither torch nor the reference engine, so records verify on a docs machine."""
    probe = subprocess.run([sys.executable, "-c", _NO_TORCH, str(finished_record)],
                           capture_output=True, text=True, timeout=patience.scaled(1800))
    assert probe.returncode == 0, probe.stderr
    status, heavy = probe.stdout.strip().splitlines()[-1].split(" ", 1)
    assert heavy == "[]", f"imported: {heavy}"
    assert status == "1"  # a one-test record is valid, and misses required contracts


def test_contract_names_are_the_package_roots():
    """Rule: a plugin author's `from conformance import ...` names are the contract's."""
    import conformance
    from conformance import contract

    for name in contract.__all__:
        assert getattr(conformance, name) is getattr(contract, name)
