"""Starts an xdist worker so that Ctrl-C while it starts leaves only the kit's line.

Ctrl-C in a terminal reaches every process of the foreground group, the workers too,
and the controller, interrupted, may close a worker's pipe before sending it
execnet's bootstrap line. Either way a starting worker would print a traceback of
its own (``KeyboardInterrupt``, or a ``SyntaxError`` on the empty line it read)
beside the kit's one line. So the worker starts with SIGINT ignored (``exec`` keeps
it, and Python leaves it so) and takes Ctrl-C back when its session starts
(``interrupts.session_started``); until then its controller stops it in order. A
worker whose pipe ends before the bootstrap line (its controller is stopping) exits
without starting. Run as a script, not a module: it imports nothing of the kit.

``python worker_launch.py ARGS`` is ``python ARGS`` so changed.
"""

import array
import fcntl
import os
import select
import signal
import sys
import termios

#: Set for the worker when this launcher, not the user, made it ignore SIGINT.
DEFERRED = "CONFORMANCE_WORKER_CTRL_C_DEFERRED"


def _pipe_ended_before_any_line() -> bool:
    """Wait until the controller writes or closes the pipe; True if it closed it."""
    select.select([sys.stdin.fileno()], [], [])
    waiting = array.array("i", [0])
    try:
        fcntl.ioctl(sys.stdin.fileno(), termios.FIONREAD, waiting)
    except OSError:  # not a pipe (execnet always gives one): start as asked
        return False
    return waiting[0] == 0  # readable with nothing to read: the end of the pipe


if __name__ == "__main__":
    # A run started with SIGINT ignored (a background job of a script) keeps it so.
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.environ[DEFERRED] = "1"
    if _pipe_ended_before_any_line():
        sys.exit(0)
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
