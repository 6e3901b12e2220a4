"""``conformance`` (the console script) and ``python -m conformance``.

Importing the command's modules takes a moment; Ctrl-C in that moment ends the
command with one line instead of the traceback of whichever import it hit. The
commands then handle Ctrl-C themselves (``conformance run`` keeps its record).
"""

import os
import signal
import sys


def _interrupted(signum, frame) -> None:
    sys.stderr.write("conformance: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def main() -> int:
    signal.signal(signal.SIGINT, _interrupted)
    from conformance import cli

    signal.signal(signal.SIGINT, signal.default_int_handler)
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
