"""The rough edges a new plugin author met, each smoothed: a mistyped option, a ``-k``
that selects nothing, Ctrl-C, a hand-edited record, a capability declared as a set."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import patience
import pytest
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
                                   "unknown feature 'sliding_windw' (did you mean 'sliding_window'?)"]


#: Moments of a run at which Ctrl-C arrives, each named by what the run has shown so
#: far: (what its output must contain, how many tests its record must hold).
CTRL_C_MOMENTS = {
    "importing the command": (None, 0),
    "starting pytest": ("conformance kit ", 0),
    "running tests": (None, 1),
}
#: Each line a run may end with when Ctrl-C ends it (the command's, its pytest's,
#: or, once tests have run, the note that the record is kept).
ONE_LINERS = ("conformance: interrupted", "interrupted before the first test: nothing was recorded",
              "conformance run: interrupted; the record ")


@pytest.mark.kit_run
@pytest.mark.parametrize("moment", CTRL_C_MOMENTS)
def test_ctrl_c_at_any_moment_is_one_line(kit_env, tmp_path, moment):
    """Rule: from the moment the ``conformance`` command starts, Ctrl-C ends it with
    exit status 130 and one line of the kit's, never a traceback, whatever it was
    doing (once pytest's session has started, pytest's usual three-line
    KeyboardInterrupt note comes before it)."""
    shown, recorded = CTRL_C_MOMENTS[moment]
    started, record, output = tmp_path / "started", tmp_path / "r.json", tmp_path / "output.txt"
    launcher = (f"import pathlib, sys; pathlib.Path({str(started)!r}).touch(); "
                "import conformance.__main__ as entry; sys.exit(entry.main())")
    with open(output, "w") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", launcher, "run", "--platform=cpu", "--suite=platform", f"--record={record}"],
            cwd=tmp_path, env=kit_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        patience.wait_until(
            lambda: started.exists() and (shown is None or shown in output.read_text())
            and patience.tests_recorded(record) >= recorded,
            progress=lambda: (output.stat().st_size, patience.tests_recorded(record)))
        os.killpg(child.pid, signal.SIGINT)
        child.wait(timeout=patience.scaled(600))
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    text = output.read_text()
    assert child.returncode == 130, text
    assert "Traceback" not in text, text
    assert text.rstrip().splitlines()[-1].startswith(ONE_LINERS), text


WORKER_LAUNCH = [sys.executable, "-m", "conformance.pytest_plugin.worker_launch"]


def test_a_worker_whose_controller_stops_before_its_bootstrap_exits_without_a_word():
    """A worker's pipe closed before execnet's bootstrap line (its controller was
    interrupted while starting it): the worker exits 0 and prints nothing, where
    Python would print a SyntaxError traceback of the empty line it read."""
    done = subprocess.run([*WORKER_LAUNCH, "-c", "import sys; exec(eval(sys.stdin.readline()))"],
                          input=b"", capture_output=True, timeout=patience.scaled(60))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_starting_worker_leaves_ctrl_c_to_its_controller():
    """SIGINT reaching a worker before its session starts is ignored (its controller
    stops it in order), and the worker knows to take Ctrl-C back at session start."""
    survives = ("import os, signal, sys; sys.stdin.readline(); os.kill(os.getpid(), signal.SIGINT); "
                "print(os.environ.get('CONFORMANCE_WORKER_CTRL_C_DEFERRED'))")
    done = subprocess.run([*WORKER_LAUNCH, "-c", survives], input=b"bootstrap\n", capture_output=True,
                          timeout=patience.scaled(60))
    assert (done.returncode, done.stdout.strip()) == (0, b"1"), done.stderr


@pytest.mark.parametrize(("args", "words"), [
    (["--platform", "cpux"], "no platform plugin named 'cpux' is installed (did you mean 'cpu'?"),
    (["--platform", "cpu", "--suite", "atention"], "unknown suite 'atention' in --suite"),
    (["--platform", "cpu", "--expectations", "missing.toml"], "cannot read expectations file missing.toml"),
], ids=["plugin", "suite", "expectations"])
def test_refusals_that_need_no_torch_come_before_it(kit, args, words):
    """Rule: what can be checked without torch (the plugin's name, the suites, the
    expectations file) is refused in one line before torch or a worker starts."""
    run = kit("run", *args, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert run.returncode == 2, run.stderr[-2000:]
    (line,) = [line for line in run.stderr.splitlines() if not line.startswith("import time:")]
    assert line.startswith("conformance run: ") and words in line, line
    assert not re.search(r"\|\s+torch$", run.stderr, re.MULTILINE), "torch was imported"


def test_a_record_left_by_an_earlier_run_is_not_this_runs(kit, kit_env, tmp_path):
    """Rule: a run that writes no record (its plugin fails to load) says so, even
    where an earlier run's record lies at the same path; that record is not verified
    in its place."""
    earlier = tmp_path / "r.json"
    earlier.write_text('{"earlier": true}')
    run = kit("run", "--platform", "raising", "--record", str(earlier), env=kit_env)
    assert run.returncode != 0
    assert f"conformance: no record was written to {earlier}" in run.stderr, run.stderr[-2000:]
    assert "INVALID" not in run.stdout + run.stderr
