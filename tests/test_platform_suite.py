"""The Platform suite passes correct plugins and catches every broken one."""

from __future__ import annotations

import pytest

from plugins import catalogue


@pytest.mark.parametrize("name", ["cpu", *catalogue.GOOD])
def test_correct_plugins_pass_everything(run_kit, name):
    """A correct plugin passes every contract of every suite (opt-outs are reported
    as not_supported, never failures)."""
    run = run_kit(f"--platform={name}", "-q", "-n", "2", "--conformance-record=run.record.json")
    assert run.returncode == 0, run.output
    record = run.record
    assert record["complete"] and record["summary"].get("passed", 0) > 20, record["summary"]
    assert run.contracts_with("failed", "error", "crashed", "timed_out") == set()


@pytest.mark.parametrize("name", catalogue.broken_for("platform"))
def test_broken_plugin_fails_on_the_contract_it_breaks(run_kit, name):
    """Each broken plugin fails the suite, on exactly the contracts it breaks, and
    the other contracts still pass."""
    _, _, expected = catalogue.BROKEN[name]
    run = run_kit(f"--platform={name}", "--suite=platform", "-q",
                  "--conformance-record=run.record.json")
    assert run.returncode == 1, run.output
    failing = run.contracts_with("failed", "error")
    assert failing == expected, f"failed {sorted(failing)}, expected {sorted(expected)}"
    passing = run.contracts_with("passed", "not_supported")
    assert passing | failing == set(run.record["contracts"]), run.record["contracts"]
