"""The rough edges a new plugin author met, each smoothed: a mistyped option, a ``-k``
that selects nothing, Ctrl-C, a hand-edited record, a capability declared as a set."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import patience
import torch

from conformance.contract.capabilities import PlatformCapabilities
from conformance.results import verify_record
from conformance.results.verify import INCOMPLETE, INVALID


def test_a_mistyped_run_option_is_refused_before_pytest_starts(kit, tmp_path):
    run = kit("run", "--platform", "cpu", "--tset-timeout=5", "--record", "r.json")
    assert run.returncode == 2
    assert run.stderr.startswith("usage: conformance run"), run.stderr
    assert "unknown option --tset-timeout (did you mean --test-timeout?)" in run.stderr
    assert "test session starts" not in run.stdout + run.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_k_that_selects_nothing_names_close_contracts(kit, tmp_path):
    run = kit("run", "--platform", "cpu", "-k", "platform.runtim.memroy", "--record", "r.json")
    lines = [line for line in run.stdout.splitlines() if "no test matched" in line]
    assert lines == ["ERROR: no test matched -k 'platform.runtim.memroy'; close contract ids: "
                     "platform.runtime.memory, platform.runtime.pin_memory, "
                     "platform.runtime.mem_get_info, platform.runtime.stream, "
                     "platform.runtime.synchronize"], run.stdout
    assert run.returncode == INVALID
    assert run.stdout.splitlines()[-1].endswith("the run recorded no test: a run that tests nothing proves nothing")


def test_ctrl_c_keeps_the_record_marked_incomplete(kit_env, tmp_path):
    """Rule: Ctrl-C (SIGINT to the terminal's process group) ends conformance run with
    one line and no traceback, and the record holds what ran, marked incomplete."""
    record = tmp_path / "r.json"
    child = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--platform=hanging_synchronize",
         "--suite=platform", f"--record={record}"],
        cwd=tmp_path, env=kit_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        # The tests before the runtime area finish; then synchronize() hangs.
        patience.wait_until(lambda: patience.tests_recorded(record) >= 5 or child.poll() is not None,
                            progress=lambda: patience.tests_recorded(record))
        assert child.poll() is None, "the run ended before it could be interrupted"
        os.killpg(child.pid, signal.SIGINT)
        stdout, stderr = child.communicate(timeout=patience.scaled(600))
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert child.returncode == 130, stdout + stderr
    assert "Traceback" not in stdout + stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("conformance run:")]
    assert line == f"conformance run: interrupted; the record {record} is kept, marked incomplete (INCOMPLETE)"
    kept = json.loads(record.read_text())
    assert kept["complete"] is False and len(kept["tests"]) >= 5
    assert verify_record(record).exit_code == INCOMPLETE


def test_a_hand_edited_record_names_the_contract(run_kit):
    run = run_kit("--platform=cpu", "-k", "platform.identity", "--conformance-record=run.record.json")
    assert run.returncode == 0, run.output
    record = run.record
    record["contracts"]["platform.identity.names"]["outcome"] = "failed"
    run.record_path.write_text(json.dumps(record))
    verdict = verify_record(run.record_path)
    assert verdict.exit_code == INVALID
    assert verdict.line.endswith("per-contract roll-up does not match the test entries for "
                                 "platform.identity.names"), verdict.line


def test_capabilities_report_every_problem_at_once():
    declared = PlatformCapabilities(dtypes=(torch.float32,), head_sizes=(64,), block_sizes=(16,),
                                    features={"sliding_windw"})
    assert declared.validate() == ["features must be a frozenset, got {'sliding_windw'}",
                                   "unknown feature 'sliding_windw'"]
