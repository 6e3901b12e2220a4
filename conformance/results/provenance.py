"""What identifies the suites a record was made by: a digest of their sources.

The verifier recomputes it from the installed suites' files (read, never imported),
so it needs neither torch nor the engine.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path


def suites_root() -> Path:
    return Path(str(resources.files("conformance") / "suites"))


def suite_hash(root: Path | None = None) -> str:
    """A digest of every suite source file, so a record says exactly what was run.

    Paths are hashed relative to the suites folder and in sorted order, so the hash
    is the same wherever and however the kit is installed.
    """
    root = suites_root() if root is None else root
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return f"sha256:{digest.hexdigest()}"
