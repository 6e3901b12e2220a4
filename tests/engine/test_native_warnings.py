"""What a user sees when the C kernels cannot be built: one warning with its cause."""

from __future__ import annotations

import subprocess
import sys

import patience

_PROBE = """
import warnings
warnings.simplefilter("always")
from conformance.reference_engine.kernels.cpu import native
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert native.library("linear") is None and native.library("paged_attention") is None
print(len(caught)); print(caught[0].message)
print(native.unavailable_reason("linear"))
"""


def test_a_failing_compiler_warns_once_with_its_exit_status(tmp_path):
    """Rule: a compiler that fails without a word gives one warning for all kernels,
    naming its exit status, and each kernel still says why it is unavailable."""
    env = {"PATH": "/usr/bin:/bin", "CC": "false", "CONFORMANCE_CACHE_DIR": str(tmp_path),
           "PYTHONPATH": ":".join(sys.path)}
    probe = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                           timeout=patience.scaled(1800))
    assert probe.returncode == 0, probe.stderr
    count, warning, reason = probe.stdout.strip().splitlines()[-3:]
    assert count == "1", probe.stdout
    assert "failed on linear.c (exit status 1)" in warning, warning
    assert reason.startswith("C kernel 'linear' unavailable") and "exit status 1" in reason
