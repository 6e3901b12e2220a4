"""Kernel tests: Triton ops under ``TRITON_INTERPRET=1`` on CPU tensors, or on a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import patience
import pytest
import torch

#: For tests that need a real CUDA device: skipped only where none is present.
requires_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture
def run_interpreted():
    """``run_interpreted("module:function")`` calls that function of ``tests/`` in a
    child process with ``TRITON_INTERPRET=1``: Triton reads the variable when it is
    first imported, so it cannot be switched on inside this process."""
    pytest.importorskip("triton", reason="the test extra installs triton")
    tests = Path(__file__).resolve().parent.parent

    def run(target: str) -> None:
        module, function = target.split(":")
        env = {**os.environ, "TRITON_INTERPRET": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(tests), str(tests / "plugins"),
                                                           os.environ.get("PYTHONPATH")]))}
        child = subprocess.run([sys.executable, "-W", "ignore", "-c", f"import {module}; {module}.{function}()"],
                               env=env, capture_output=True, text=True, timeout=patience.scaled(1800))
        assert child.returncode == 0, child.stdout + child.stderr

    return run
