"""Build and load the CPU path's C kernels.

Why C, and why through ``ctypes``: the CPU path's memory-bound steps (paged decode
attention, low-precision matrix-vector products) are limited by how often the data
is read, and torch can only express them as a gather, a copy and a product, each a
pass over memory. A C loop reads the data once. A torch C++ extension would do too,
but compiling one against torch's headers takes about a minute; these plain C files
need only the C library's headers and compile in about a second, on first use.

A library is built with the system C compiler (``$CC``, else ``cc``) at
``-O3 -march=native`` with OpenMP, and cached under ``$CONFORMANCE_CACHE_DIR``
(default ``~/.cache/conformance-kit``). The cache key covers the source, the headers
beside it, the flags, the compiler's version and this CPU's feature flags, so a home
folder shared between machines never loads code built for another CPU. OpenMP comes
from ``libgomp.so.1``, the runtime torch has already loaded, so both share one thread
pool.

``CONFORMANCE_NATIVE_KERNELS=0`` turns the C kernels off. Where they cannot be built
(no compiler, a failing build) callers fall back to their torch implementation, and
``unavailable_reason()`` says why; nothing is silently wrong, only slower.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

SOURCES = Path(__file__).resolve().parent
FLAGS = ("-O3", "-march=native", "-fPIC", "-shared", "-std=c11", "-fno-math-errno")
OPENMP = ("-fopenmp",)
ENV_SWITCH = "CONFORMANCE_NATIVE_KERNELS"


class NativeBuildError(RuntimeError):
    """A C kernel could not be compiled or loaded."""


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in {"0", "false", "no", "off"}


def cache_dir() -> Path:
    root = os.environ.get("CONFORMANCE_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "conformance-kit"


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            return next((line for line in info if line.startswith(("flags", "Features"))), "")
    except OSError:
        return ""


def _compiler() -> str:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise NativeBuildError("no C compiler found (set CC, or install gcc)")
    return compiler


def _compile(source: Path, target: Path, compiler: str, flags: tuple[str, ...]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed: two processes building at once (pytest-xdist
    # workers) each rename a complete file, and a reader never sees half of one.
    fd, partial = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        result = subprocess.run([compiler, *flags, str(source), "-o", partial, "-lm"],
                                capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            output = (result.stderr or result.stdout).strip()[-2000:]
            raise NativeBuildError(f"{compiler} failed on {source.name} (exit status "
                                   f"{result.returncode})" + (f": {output}" if output else ""))
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def build(name: str) -> Path:
    """The shared library of ``<name>.c`` beside this module, compiled if not cached."""
    source = SOURCES / f"{name}.c"
    compiler = _compiler()
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    last_error = None
    for flags in (FLAGS + OPENMP, FLAGS):  # without OpenMP the kernels run on one thread
        headers = [h.read_text() for h in sorted(SOURCES.glob("*.h"))]
        key = hashlib.sha256("\0".join([source.read_text(), *headers, *flags, version, _cpu_flags()]).encode())
        target = cache_dir() / f"{name}-{key.hexdigest()[:16]}.so"
        if target.exists():
            return target
        try:
            _compile(source, target, compiler, flags)
            return target
        except NativeBuildError as error:
            last_error = error
    raise last_error


#: Whether this process has warned: a missing or broken compiler is one warning, not
#: one per kernel (``unavailable_reason`` keeps each kernel's own).
_warned = False


@functools.cache
def _load(name: str) -> ctypes.CDLL | str:
    if not enabled():
        return f"{ENV_SWITCH}=0"
    try:
        return ctypes.CDLL(str(build(name)))
    except (NativeBuildError, OSError, subprocess.SubprocessError) as error:
        global _warned
        reason = f"C kernel {name!r} unavailable, using the torch implementation: {error}"
        if not _warned:
            _warned = True
            warnings.warn(f"{reason} (further kernels that fail are not warned about)",
                          RuntimeWarning, stacklevel=3)
        return reason


def library(name: str) -> ctypes.CDLL | None:
    """The loaded library of ``<name>.c``, or None where C kernels are off or cannot
    be built (warned once, with the reason)."""
    loaded = _load(name)
    return loaded if isinstance(loaded, ctypes.CDLL) else None


def unavailable_reason(name: str) -> str | None:
    """Why ``library(name)`` is None, or None when it loads."""
    loaded = _load(name)
    return None if isinstance(loaded, ctypes.CDLL) else loaded
