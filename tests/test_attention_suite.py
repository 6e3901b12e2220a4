"""The Attention suite passes correct backends and catches every broken one."""

from __future__ import annotations

import pytest

from plugins import catalogue


@pytest.mark.parametrize("name", sorted(catalogue.INTERPRETED))
def test_triton_backend_passes_under_the_interpreter(run_kit, kit_env, name):
    """The cuda platform's Triton backend, on CPU tensors under TRITON_INTERPRET=1,
    passes every contract of the Attention suite (``smoke`` profile: the interpreter
    is slow)."""
    pytest.importorskip("triton", reason="the test extra installs triton")
    run = run_kit(f"--platform={name}", "--suite=attention", "-q", "--conformance-record=run.record.json",
                  env={**kit_env, "TRITON_INTERPRET": "1", "CONFORMANCE_HYPOTHESIS_PROFILE": "smoke"})
    assert run.returncode == 0, run.output
    assert run.contracts_with("failed", "error", "crashed", "timed_out") == set()


@pytest.mark.parametrize("name", catalogue.broken_for("attention"))
def test_broken_backend_fails_on_the_contract_it_breaks(run_kit, name):
    """Each broken backend fails the suite, on exactly the contracts its bug breaks,
    and the other contracts still pass."""
    _, _, expected = catalogue.BROKEN[name]
    run = run_kit(f"--platform={name}", "--suite=attention", "-q", "--conformance-record=run.record.json")
    assert run.returncode == 1, run.output
    failing = run.contracts_with("failed", "error")
    assert failing == expected, f"failed {sorted(failing)}, expected {sorted(expected)}"
    passing = run.contracts_with("passed", "not_supported")
    assert passing | failing == set(run.record["contracts"]), run.record["contracts"]
