"""The Engine suite catches plugins whose worker corrupts generation, on the contracts
the corruption breaks (correct plugins passing every suite is
tests/test_platform_suite.py's check)."""

from __future__ import annotations

import pytest

from plugins import catalogue


@pytest.mark.parametrize("name", catalogue.broken_for("engine"))
def test_broken_plugin_fails_generation_contracts(run_kit, name):
    """Each broken plugin fails the Engine suite on exactly the contracts it breaks;
    every other contract still passes."""
    _, _, expected = catalogue.BROKEN[name]
    run = run_kit(f"--platform={name}", "--suite=engine", "-q", "--conformance-record=run.record.json")
    assert run.returncode == 1, run.output
    failing = run.contracts_with("failed", "error", "crashed", "timed_out")
    assert failing == expected, f"failed {sorted(failing)}, expected {sorted(expected)}\n{run.output}"
    assert run.contracts_with("passed") | failing == set(run.record["contracts"]), run.record["contracts"]
