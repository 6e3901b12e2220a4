"""The suites against the test plugins of ``plugins/catalogue.py``: correct plugins
pass every suite, each broken one fails exactly the contracts it breaks, and hangs and
crashes in rank processes become outcomes that leave no process behind."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from plugins import catalogue

from conformance.results.outcomes import FAILING

#: Long enough for any correct collective on a loaded 2-core machine, short enough
#: that the hanging communicator's two hangs stay cheap.
RANK_TIMEOUT_S = 15


def _processes_with(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (zombies have none)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("name", sorted(catalogue.GOOD))
def test_correct_plugins_pass_everything(run_kit, name):
    """A correct plugin, run with ``pytest --platform`` from an empty folder, passes
    every contract of every suite (opt-outs are reported as not_supported, never
    failures or errors). The built-in ``cpu`` is run by ``test_cli``."""
    run = run_kit(f"--platform={name}", "-q", "-n", "2", "--conformance-record=run.record.json")
    assert run.returncode == 0, run.output
    record = run.record
    assert record["complete"] and record["summary"].get("passed", 0) > 20, record["summary"]
    assert run.contracts_with(*FAILING) == set()


@pytest.mark.parametrize("name", sorted(catalogue.GOOD_IN_SUITES))
def test_correct_plugins_pass_their_suites(run_kit, name):
    """A correct plugin that differs from ``cpu`` in a few suites passes every
    contract of those (what it does not need is not_supported, never a failure)."""
    _, suites = catalogue.GOOD_IN_SUITES[name]
    run = run_kit(f"--platform={name}", f"--suite={suites}", "-q", "--conformance-record=run.record.json")
    assert run.returncode == 0, run.output
    assert run.contracts_with(*FAILING) == set()


@pytest.mark.parametrize("name", sorted(catalogue.INTERPRETED))
def test_triton_backend_passes_under_the_interpreter(run_kit, kit_env, name):
    """The cuda platform's Triton backend, on CPU tensors under TRITON_INTERPRET=1,
    passes every contract of the Attention suite (``smoke`` profile: the interpreter
    is slow)."""
    pytest.importorskip("triton", reason="the test extra installs triton")
    run = run_kit(f"--platform={name}", "--suite=attention", "-q", "--conformance-record=run.record.json",
                  env={**kit_env, "TRITON_INTERPRET": "1", "CONFORMANCE_HYPOTHESIS_PROFILE": "smoke"})
    assert run.returncode == 0, run.output
    assert run.contracts_with(*FAILING) == set()


@pytest.mark.parametrize("name", sorted(catalogue.BROKEN))
def test_broken_plugin_fails_on_the_contracts_it_breaks(run_kit, name):
    """Each broken plugin fails the suite that must catch it on exactly the
    contracts it breaks; every other contract of that suite still passes (or is
    declared not supported)."""
    _, suite, expected = catalogue.BROKEN[name]
    run = run_kit(f"--platform={name}", f"--suite={suite}", "-q",
                  f"--rank-timeout={RANK_TIMEOUT_S * 6}", "--conformance-record=run.record.json")
    assert run.returncode == 1, run.output
    failing = run.contracts_with(*FAILING)
    assert failing == expected, f"failed {sorted(failing)}, expected {sorted(expected)}\n{run.output}"
    passing = run.contracts_with("passed", "not_supported")
    assert passing | failing == set(run.record["contracts"]), run.record["contracts"]


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("name", sorted(catalogue.MISBEHAVING_COMMUNICATORS))
def test_rank_hangs_and_crashes_are_outcomes(run_kit, kit_env, name):
    """A communicator that hangs one rank ends as ``timed_out`` within the rank
    timeout, one that kills a rank as ``crashed``; every other contract still
    passes, and no process of the run is left once it ends."""
    _, contract, outcome = catalogue.MISBEHAVING_COMMUNICATORS[name]
    marker = f"CONFORMANCE_LEAK_PROBE={uuid.uuid4()}"
    key, value = marker.split("=")
    run = run_kit(f"--platform={name}", "--suite=communicator", "-q",
                  f"--rank-timeout={RANK_TIMEOUT_S}", "--conformance-record=run.record.json",
                  env={**kit_env, key: value})

    assert run.returncode == 1, run.output
    assert run.contracts_with(*FAILING) == {contract}
    assert run.record["contracts"][contract]["outcome"] == outcome
    for test in run.record["tests"]:
        if test["contract"] == contract and test["outcome"] == "timed_out":
            assert test["duration"] < RANK_TIMEOUT_S * 3, test
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_with(marker) == [], "rank processes outlived the run"
