"""A bridged run stopped by SIGTERM (a CI job cancelled) or SIGINT (Ctrl-C) leaves no
process behind: not the rank processes nor their forkserver, not the config hook's
child, not vLLM's engine process nor what vLLM started under it; and a test past its
timeout while vLLM's engine starts ends as ``timed_out``, recorded, the run going on.

Needs vLLM (``pip install 'conformance[vllm]'``); deselected by default, run with
``python -m pytest -m requires_vllm tests/bridges`` (docs/vllm.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import patience
import pytest
from processes import GONE_S, alive, assert_all_gone, clean_up, descendants, linux_only

pytestmark = pytest.mark.requires_vllm

def _start(folder: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    output = folder / "out.txt"
    with output.open("w") as out:
        run = subprocess.Popen(
            [sys.executable, "-m", "pytest", "--platform=vllm:cpu", "-p", "no:cacheprovider", *args],
            cwd=folder, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    return run, output


@linux_only
@pytest.mark.parametrize(("signum", "selection", "started"), [
    (signal.SIGTERM, ("--suite", "communicator", "-k", "world2 and all_reduce"), 3),
    (signal.SIGINT, ("--suite", "engine", "-k", "engine.generate.fp32_greedy"), 2),
], ids=["sigterm-ranks", "sigint-engine"])
def test_a_stopped_run_leaves_no_process(tmp_path, signum, selection, started):
    """Stopped once it has started ``started`` processes (a forkserver and two ranks;
    the engine's process and vLLM's own), every process it started is gone."""
    run, output = _start(tmp_path, *selection)
    seen: set[int] = set()
    try:
        def enough() -> bool:
            seen.update(descendants(run.pid))
            assert run.poll() is None, output.read_text()[-3000:]
            return len(alive(seen)) >= started

        patience.wait_until(enough, lambda: (len(seen), output.stat().st_size))
        seen.update(descendants(run.pid))
        os.kill(run.pid, signum)
        patience.wait_until(lambda: run.poll() is not None, lambda: len(alive(seen)),
                            stall_s=GONE_S)
        assert_all_gone(seen, signal.Signals(signum).name)
    finally:
        clean_up(run, seen)


@linux_only
@pytest.mark.parametrize(("suite", "contract", "process"), [
    # batch_invariance reads the plugin's runs first: the timeout hits vLLM's engine start.
    ("engine", "engine.generate.batch_invariance", "vLLM's engine"),
    # The config hook runs in a process of its own, which imports vLLM on first use.
    ("platform", "platform.config.check_and_update", "vLLM's config process"),
], ids=["engine", "config-process"])
def test_a_timeout_while_vllm_starts_is_recorded(tmp_path, suite, contract, process):
    """A --startup-timeout shorter than vLLM's start (which --test-timeout does not
    count): the test ends as timed_out, naming the start-up in the record and on the
    terminal; the starting process is killed, not waited for, and the run ends by
    itself."""
    record = tmp_path / "record.json"
    run, output = _start(tmp_path, "--suite", suite, "-k", contract,
                         "--startup-timeout", "5", f"--conformance-record={record}")
    seen: set[int] = set()
    try:
        def ended() -> bool:
            seen.update(descendants(run.pid))
            return run.poll() is not None

        patience.wait_until(ended, lambda: (len(seen), output.stat().st_size))
        assert_all_gone(seen, "the run")
    finally:
        clean_up(run, seen)
    (test,) = [t for t in json.loads(record.read_text())["tests"] if t["contract"] == contract]
    assert test["outcome"] == "timed_out", test
    assert f"{process} did not start within --startup-timeout=5 s" in test["message"]
    assert f"{process} did not start within --startup-timeout=5 s" in output.read_text()
