"""The Worker suite catches every broken worker on the contract its bug breaks (correct
plugins passing every suite is tests/test_platform_suite.py's check)."""

from __future__ import annotations

import pytest

from plugins import catalogue


@pytest.mark.parametrize("name", catalogue.broken_for("worker"))
def test_broken_worker_fails_on_the_contract_it_breaks(run_kit, name):
    """Each broken worker fails the Worker suite on exactly the contracts it breaks;
    every other contract still passes."""
    _, _, expected = catalogue.BROKEN[name]
    run = run_kit(f"--platform={name}", "--suite=worker", "-q", "--conformance-record=run.record.json")
    assert run.returncode == 1, run.output
    failing = run.contracts_with("failed", "error", "crashed", "timed_out")
    assert failing == expected, f"failed {sorted(failing)}, expected {sorted(expected)}\n{run.output}"
    assert run.contracts_with("passed") | failing == set(run.record["contracts"]), run.record["contracts"]
