"""What a plain install brings: every command runs without a warning from torch."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata


def test_numpy_is_installed_with_the_kit():
    """Rule: the kit requires NumPy, which torch imports for its tensor conversions
    and without which torch warns "Failed to initialize NumPy" at every import."""
    requirements = [r.split(";")[0].replace(" ", "") for r in metadata.requires("conformance") or []]
    assert any(r.startswith("numpy") for r in requirements), requirements


def test_torch_imports_without_a_warning():
    """Rule: importing torch and the kit's command warns about nothing."""
    child = subprocess.run([sys.executable, "-W", "error", "-c", "import torch, conformance.cli; torch.zeros(1)"],
                           capture_output=True, text=True)
    assert child.returncode == 0, child.stderr
