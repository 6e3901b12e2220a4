"""The Communicator suite passes correct communicators and catches broken ones;
hangs and crashes in rank processes become outcomes and leave no process behind."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from plugins import catalogue

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


@pytest.mark.parametrize("name", catalogue.broken_for("communicator"))
def test_broken_communicator_fails_on_the_contract_it_breaks(run_kit, name):
    """Each broken communicator fails the suite on exactly the contract it breaks."""
    _, _, expected = catalogue.BROKEN[name]
    run = run_kit(f"--platform={name}", "--suite=communicator", "-q",
                  f"--rank-timeout={RANK_TIMEOUT_S * 6}", "--conformance-record=run.record.json")
    assert run.returncode == 1, run.output
    failing = run.contracts_with("failed", "error", "crashed", "timed_out")
    assert failing == expected, f"failed {sorted(failing)}, expected {sorted(expected)}"


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("name", sorted(catalogue.MISBEHAVING_COMMUNICATORS))
def test_hangs_and_crashes_are_outcomes(run_kit, kit_env, name):
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
    assert run.contracts_with("failed", "error", "crashed", "timed_out") == {contract}
    assert run.record["contracts"][contract]["outcome"] == outcome
    for test in run.record["tests"]:
        if test["contract"] == contract and test["outcome"] == "timed_out":
            assert test["duration"] < RANK_TIMEOUT_S * 3, test
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_with(marker) == [], "rank processes outlived the run"
