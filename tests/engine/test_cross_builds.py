"""The kernels' AArch64 variants, where this host has a cross compiler: each built
with its variant's flags, and run under qemu-aarch64 against a double-precision
reference where that emulator is installed too (Debian: ``gcc-aarch64-linux-gnu``,
``qemu-user``). Torch does not run there, so ``cross/check_*.c`` is the reference."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import patience
import pytest

from conformance.reference_engine.kernels.cpu import native

CROSS_COMPILER = shutil.which("aarch64-linux-gnu-gcc")
EMULATOR = shutil.which("qemu-aarch64")
SYSROOT = "/usr/aarch64-linux-gnu"
CHECKS = Path(__file__).resolve().parent / "cross"


@pytest.mark.skipif(CROSS_COMPILER is None, reason="no AArch64 cross compiler (apt-get install gcc-aarch64-linux-gnu)")
@pytest.mark.parametrize("variant", native.machine_variants("aarch64"), ids=lambda v: v.name)
@pytest.mark.parametrize("kernel", ["linear", "attention"])
def test_aarch64_variant_builds_and_matches_the_reference(variant, kernel, tmp_path):
    """Rule: every AArch64 variant compiles with its flags into that variant's code,
    and (with an emulator) computes the products and attention of the reference."""
    program = tmp_path / f"check_{kernel}"
    subprocess.run([CROSS_COMPILER, *native.FLAGS[:1], "-std=c11", "-fno-math-errno", *native.OPENMP,
                    *variant.flags, f"-I{native.SOURCES}", str(CHECKS / f"check_{kernel}.c"),
                    "-o", str(program), "-lm"], check=True, capture_output=True,
                   timeout=patience.scaled(1800))
    if EMULATOR is None:
        return
    run = subprocess.run([EMULATOR, "-L", SYSROOT, str(program)], capture_output=True, text=True, timeout=patience.scaled(1800))
    assert run.returncode == 0 and run.stdout.startswith(f"{variant.name} "), run.stdout + run.stderr
