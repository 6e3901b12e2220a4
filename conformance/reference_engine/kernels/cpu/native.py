"""Build and load the CPU path's C kernels, in the variant for this host's instruction set.

Why C, and why through ``ctypes``: the CPU path's memory-bound steps (paged decode
attention, low-precision matrix-vector products) are limited by how often the data
is read, and torch can only express them as a gather, a copy and a product, each a
pass over memory. A C loop reads the data once. A torch C++ extension would do too,
but compiling one against torch's headers takes about a minute; these plain C files
need only the C library's headers and compile in about a second, on first use.

Variants: each kernel source is built once per instruction set it has code for
(``simd.h``), with that ISA's ``-march`` rather than ``-march=native``, so a build
runs on every CPU that has the ISA: ``avx512_bf16``, ``avx512f``, ``avx2`` (AVX2 +
FMA + F16C, ``-march=x86-64-v3``), ``neon_bf16`` (NEON with Arm's BF16 extension),
``neon`` and ``portable`` (vector
extensions the compiler lowers to the baseline, ``-march=x86-64-v2`` on x86). The
first that ``/proc/cpuinfo`` says the host can execute is used;
``CONFORMANCE_CPU_KERNELS=<variant>`` (or ``library(name, variant)``) forces another
one this host can execute, as the tests do to check each against torch. Whether a
kernel is then called for a given shape is its caller's decision, per variant
(``ops.max_rows``, ``cpu_attn.NATIVE_ATTENTION_VARIANTS``): only where that variant
was measured faster than torch.

A library is built with the system C compiler (``$CC``, else ``cc``) at ``-O3`` with
OpenMP, and cached under ``$CONFORMANCE_CACHE_DIR`` (default
``~/.cache/conformance-kit``). The cache key covers the source, the headers beside
it, the flags (the variant's among them) and the compiler's version, so each variant
is compiled once per machine and a build is never reused for another ISA. OpenMP
comes from ``libgomp.so.1``, the runtime torch has already loaded, so both share one
thread pool.

``CONFORMANCE_NATIVE_KERNELS=0`` turns the C kernels off. Where they cannot be built
(no compiler, a failing build) callers fall back to their torch implementation, and
``unavailable_reason()`` says why; nothing is silently wrong, only slower.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

SOURCES = Path(__file__).resolve().parent
FLAGS = ("-O3", "-fPIC", "-shared", "-std=c11", "-fno-math-errno")
OPENMP = ("-fopenmp",)
ENV_SWITCH = "CONFORMANCE_NATIVE_KERNELS"
ENV_VARIANT = "CONFORMANCE_CPU_KERNELS"

_X86_64_V2 = frozenset({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"})
_X86_64_V3 = _X86_64_V2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
_X86_64_V4 = _X86_64_V3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


@dataclass(frozen=True)
class Variant:
    """One ISA a kernel is built for: its compiler flags and the CPU flags
    (``/proc/cpuinfo``) a host needs to execute the build."""

    name: str
    flags: tuple[str, ...]
    cpu_flags: frozenset[str]


#: Per machine, the variants best first; the last is the portable one.
VARIANTS: dict[str, tuple[Variant, ...]] = {
    "x86_64": (
        Variant("avx512_bf16", ("-march=x86-64-v4", "-mavx512bf16"), _X86_64_V4 | {"avx512_bf16"}),
        Variant("avx512f", ("-march=x86-64-v4",), _X86_64_V4),
        Variant("avx2", ("-march=x86-64-v3",), _X86_64_V3),
        Variant("portable", ("-march=x86-64-v2", "-DCONFORMANCE_PORTABLE"), _X86_64_V2),
    ),
    "aarch64": (
        Variant("neon_bf16", ("-march=armv8.2-a+bf16",), frozenset({"asimd", "bf16"})),
        Variant("neon", ("-march=armv8-a",), frozenset({"asimd"})),
        Variant("portable", ("-march=armv8-a", "-DCONFORMANCE_PORTABLE"), frozenset()),
    ),
}
#: Elsewhere: the compiler's default target, vector extensions only.
OTHER_MACHINES = (Variant("portable", ("-DCONFORMANCE_PORTABLE",), frozenset()),)


def machine_variants(machine: str | None = None) -> tuple[Variant, ...]:
    """The variants built for ``machine`` (default: this one), best first."""
    machine = machine or platform.machine()
    return VARIANTS.get({"amd64": "x86_64", "arm64": "aarch64"}.get(machine.lower(), machine), OTHER_MACHINES)


@functools.cache
def host_variants() -> tuple[Variant, ...]:
    """The variants this host can execute, best first."""
    flags = set(_cpu_flags().partition(":")[2].split())
    return tuple(v for v in machine_variants() if v.cpu_flags <= flags)


def selected_variant(name: str | None = None) -> Variant:
    """The variant ``name`` (default: ``$CONFORMANCE_CPU_KERNELS``, else the best this
    host executes); raises ``ValueError`` naming the choices for one it cannot."""
    name = (name or os.environ.get(ENV_VARIANT, "")).strip().lower() or None
    runnable = host_variants()
    if name is None:
        if not runnable:
            raise ValueError(f"this {platform.machine()} CPU has none of the kernel variants' ISAs")
        return runnable[0]
    for variant in runnable:
        if variant.name == name:
            return variant
    known = [v.name for v in machine_variants()]
    why = "this CPU cannot execute it" if name in known else f"variants of {platform.machine()}: {known}"
    raise ValueError(f"C kernel variant {name!r} refused ({why}); this host executes: "
                     f"{[v.name for v in runnable]}")


@functools.cache
def isa_flags() -> list[str]:
    """The host's CPU flags that decide the variants and routes (AMX among them)."""
    flags = set(_cpu_flags().partition(":")[2].split())
    return sorted(f for f in flags if f.startswith(("avx512", "amx")) or f in {"avx2", "fma", "f16c", "asimd", "bf16"})


def describe() -> str:
    """The variant the C kernels run as, for benchmark headers and records: its name,
    or why there is none (nothing is built here)."""
    if not enabled():
        return f"off ({ENV_SWITCH}=0)"
    try:
        return selected_variant().name
    except ValueError as error:
        return f"none ({error})"


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


def build(name: str, variant: Variant) -> Path:
    """The shared library of ``<name>.c`` beside this module for ``variant``, compiled
    if not cached."""
    source = SOURCES / f"{name}.c"
    compiler = _compiler()
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    headers = [h.read_text() for h in sorted(SOURCES.glob("*.h"))]
    last_error = None
    for flags in (FLAGS + variant.flags + OPENMP, FLAGS + variant.flags):  # without OpenMP: one thread
        key = hashlib.sha256("\0".join([source.read_text(), *headers, *flags, version]).encode())
        target = cache_dir() / f"{name}-{variant.name}-{key.hexdigest()[:16]}.so"
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
def _load(name: str, variant: Variant) -> ctypes.CDLL | str:
    try:
        loaded = ctypes.CDLL(str(build(name, variant)))
        loaded.kernel_isa.restype = ctypes.c_char_p
        built_for = loaded.kernel_isa().decode()
        if built_for != variant.name:  # the compiler did not define what the flags promise
            raise NativeBuildError(f"{name}.c built with {' '.join(variant.flags)} has the {built_for!r} "
                                   f"code, not {variant.name!r}")
        return loaded
    except (NativeBuildError, OSError, subprocess.SubprocessError) as error:
        global _warned
        reason = f"C kernel {name!r} unavailable, using the torch implementation: {error}"
        if not _warned:
            _warned = True
            warnings.warn(f"{reason} (further kernels that fail are not warned about)",
                          RuntimeWarning, stacklevel=3)
        return reason


def library(name: str, variant: str | None = None) -> ctypes.CDLL | None:
    """The loaded library of ``<name>.c`` in ``variant`` (default: ``selected_variant``),
    or None where C kernels are off or cannot be built (warned once, with the reason).
    A variant this host cannot execute raises ``ValueError``."""
    loaded = _loaded(name, variant)
    return loaded if isinstance(loaded, ctypes.CDLL) else None


def unavailable_reason(name: str, variant: str | None = None) -> str | None:
    """Why ``library(name, variant)`` is None, or None when it loads."""
    loaded = _loaded(name, variant)
    return None if isinstance(loaded, ctypes.CDLL) else loaded


def _loaded(name: str, variant: str | None) -> ctypes.CDLL | str:
    return _load(name, selected_variant(variant)) if enabled() else f"{ENV_SWITCH}=0"
