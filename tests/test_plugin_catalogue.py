"""The suites against the test plugins of ``plugins/catalogue.py``: correct plugins
pass every suite, each broken one fails exactly the contracts it breaks, and hangs and
crashes in rank processes become outcomes that leave no process behind."""

from __future__ import annotations

import uuid
from pathlib import Path

import patience
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


def _batches(prefix: str, names: list[str], size: int) -> dict[str, tuple[str, ...]]:
    return {f"{prefix}{i // size + 1}": tuple(names[i:i + size]) for i in range(0, len(names), size)}


#: Plugins run together in one child process (``run_kit_batch``), sized so that the
#: batches of a ``-n 2`` run keep both workers busy to the end.
GOOD_BATCHES = _batches("good", sorted(catalogue.GOOD) + sorted(catalogue.GOOD_IN_SUITES), 2)
BROKEN_BATCHES = {
    batch_id: batch
    for suite in sorted({suite for _, suite, _ in catalogue.BROKEN.values()})
    for batch_id, batch in _batches(
        suite, sorted(n for n, (_, s, _) in catalogue.BROKEN.items() if s == suite),
        catalogue.BATCH_SIZE[suite]).items()
}


@pytest.mark.parametrize("batch", GOOD_BATCHES.values(), ids=GOOD_BATCHES)
def test_correct_plugins_pass_everything(run_kit_batch, subtests, batch):
    """A correct plugin, run with ``pytest --platform`` from an empty folder, passes
    every contract of every suite it is checked on (opt-outs are reported as
    not_supported, never failures or errors). The built-in ``cpu`` is run by
    ``test_cli``."""
    runs = run_kit_batch({name: [f"--platform={name}", *_good_suites(name), "-q"] for name in batch})
    for name, run in runs.items():
        with subtests.test(plugin=name):
            assert run.returncode == 0, run.output
            record = run.record
            assert record["complete"] and record["summary"].get("passed", 0) > 10, record["summary"]
            assert run.contracts_with(*FAILING) == set()


def _good_suites(name: str) -> list[str]:
    """Every suite, or only those a plugin differs from ``cpu`` in."""
    if name in catalogue.GOOD_IN_SUITES:
        return [f"--suite={catalogue.GOOD_IN_SUITES[name][1]}"]
    return []


@pytest.mark.parametrize("batch", BROKEN_BATCHES.values(), ids=BROKEN_BATCHES)
def test_broken_plugins_fail_on_the_contracts_they_break(run_kit_batch, subtests, batch):
    """Each broken plugin fails the suite that must catch it on exactly the
    contracts it breaks; every other contract of that suite still passes (or is
    declared not supported)."""
    runs = run_kit_batch({name: [f"--platform={name}", f"--suite={catalogue.BROKEN[name][1]}", "-q",
                                 f"--rank-timeout={patience.scaled(RANK_TIMEOUT_S * 6):g}"]
                          for name in batch})
    for name, run in runs.items():
        expected = catalogue.BROKEN[name][2]
        with subtests.test(plugin=name):
            assert run.returncode == 1, run.output
            failing = run.contracts_with(*FAILING)
            assert failing == expected, f"failed {sorted(failing)}, expected {sorted(expected)}\n{run.output}"
            passing = run.contracts_with("passed", "not_supported")
            assert passing | failing == set(run.record["contracts"]), run.record["contracts"]


@pytest.mark.parametrize("name", sorted(catalogue.REFUSED))
def test_malformed_declarations_are_refused_before_any_test(run_kit, name):
    """A malformed capability declaration stops the run before its first test, with
    one line naming every problem, instead of failing every test that reads it."""
    _, contract, words = catalogue.REFUSED[name]
    run = run_kit(f"--platform={name}", "-q", "--conformance-record=run.record.json")
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.output
    (line,) = [line for line in run.output.splitlines() if "malformed capabilities" in line]
    assert line == f"ERROR: platform plugin {name!r} declares malformed capabilities ({contract}): {words}"
    assert "Traceback" not in run.output and not run.record_path.exists()


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


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("name", sorted(catalogue.MISBEHAVING_COMMUNICATORS))
def test_rank_hangs_and_crashes_are_outcomes(run_kit, kit_env, name):
    """A communicator that hangs one rank ends as ``timed_out`` within the rank
    timeout, one that kills a rank as ``crashed``; every other contract still
    passes, and no process of the run is left once it ends."""
    _, contract, outcome = catalogue.MISBEHAVING_COMMUNICATORS[name]
    marker = f"CONFORMANCE_LEAK_PROBE={uuid.uuid4()}"
    key, value = marker.split("=")
    rank_timeout = patience.scaled(RANK_TIMEOUT_S)
    run = run_kit(f"--platform={name}", "--suite=communicator", "-q", *catalogue.MISBEHAVING_SELECTION.get(name, ()),
                  f"--rank-timeout={rank_timeout:g}", "--conformance-record=run.record.json",
                  env={**kit_env, key: value})

    assert run.returncode == 1, run.output
    assert run.contracts_with(*FAILING) == {contract}
    assert run.record["contracts"][contract]["outcome"] == outcome
    for test in run.record["tests"]:
        if test["contract"] == contract and test["outcome"] == "timed_out":
            assert test["duration"] < rank_timeout * 3, test
    # The run has ended: whatever still carries its marker is on its way out or leaked.
    patience.wait_until(lambda: not _processes_with(marker), progress=lambda: _processes_with(marker),
                        stall_s=30)
