"""The tiers tests build real records with the matrix tests' builders
(``generated_records``, ``signing_keys``): tiers are computed from the very records
the matrix shows, so they are made one way. The release gate's CI step runs as the
CI tests run steps (``ci_helpers``: the stand-in agent, upload interpolation)."""

from __future__ import annotations

import sys
from pathlib import Path

for helpers in ("matrix", "ci"):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / helpers))
