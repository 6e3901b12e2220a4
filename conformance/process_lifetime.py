"""A child process that dies with its parent.

The processes the kit starts that would otherwise run on alone are bound to the one
that started it: ``conformance run``'s pytest (a process group of its own, for
Ctrl-C's sake), a worker's rank processes, the vLLM bridge's child. (An xdist worker
ends by itself once its controller's pipe closes.) A parent that is killed outright
(SIGKILL, an out-of-memory kill) runs no clean-up of its own, so the binding is the
kernel's: ``PR_SET_PDEATHSIG`` has it kill the child once the thread that started it
has ended. The binding survives ``exec``. It is Linux's; elsewhere a child may outlive
a killed parent.

The kit's lowest layer: it imports nothing of the kit.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    return ctypes.CDLL(None, use_errno=True).prctl


def _bind(prctl: Callable[..., int] | None) -> None:
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def die_with_parent() -> bool:
    """In a process ``multiprocessing`` started: have the kernel kill it (SIGKILL) when
    the process that started it ends (a forkserver's child: when the forkserver ends,
    which it does when its own parent ends). False if the parent had already ended
    before that was arranged: the caller then exits at once."""
    _bind(_prctl())
    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()


def dying_with_this_process() -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess.Popen`` that binds the child to the calling
    process. What it needs is looked up here, in the parent: between ``fork`` and
    ``exec`` the child may not load a library."""
    prctl, parent_pid = _prctl(), os.getpid()

    def bind() -> None:
        _bind(prctl)
        if os.getppid() != parent_pid:
            os._exit(1)  # the parent ended before the binding: nobody waits for this run

    return bind
