"""Ctrl-C before the first test ends the run with one line, not a traceback.

Once pytest's session has started, pytest turns Ctrl-C into an orderly stop (and the
kit keeps the record of what ran, marked incomplete). Before that, while Python,
torch and the plugin are still being imported, a KeyboardInterrupt would surface as a
traceback of whatever import it hit. There is nothing to keep yet, so until the
session starts Ctrl-C ends the process at once with one line.

``python -m conformance.pytest_plugin.interrupts ARGS`` is ``python -m pytest ARGS``
with this in place from the first instruction (``conformance run`` starts its child
so); ``pytest --platform`` has it from the moment the kit's plugin is configured.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path

from conformance.pytest_plugin.worker_launch import DEFERRED

#: pytest's exit status for an interrupted run.
INTERRUPTED = 2


def _end_quietly(signum, frame) -> None:
    sys.stderr.write("interrupted before the first test: nothing was recorded\n")
    sys.stderr.flush()
    os._exit(INTERRUPTED)


def quiet_until_session() -> None:
    """Make Ctrl-C end the process with one line until ``session_started``. Not in
    an xdist worker: its controller stops it in order, and reports for it."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _end_quietly)


def session_started() -> None:
    """Hand Ctrl-C back to Python (and so to pytest's orderly stop); in an xdist
    worker, take it back from its controller (``worker_launch``)."""
    if signal.getsignal(signal.SIGINT) is _end_quietly or os.environ.pop(DEFERRED, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def launch_workers_deferring_ctrl_c(config) -> None:
    """Start the xdist workers of this machine (``popen``) through ``worker_launch``,
    so that Ctrl-C while one starts is its controller's to handle."""
    specs = getattr(config.option, "tx", None)
    if specs:  # xdist is distributing this run
        launcher = shlex.join([sys.executable, str(Path(__file__).with_name("worker_launch.py"))])
        config.option.tx = [f"popen//python={launcher}" if spec == "popen" else spec for spec in specs]


if __name__ == "__main__":
    # Through the package's module, not this __main__ copy: the plugin hands Ctrl-C
    # back only from the handler it knows.
    from conformance.pytest_plugin import interrupts

    interrupts.quiet_until_session()
    import pytest

    sys.exit(pytest.console_main())
