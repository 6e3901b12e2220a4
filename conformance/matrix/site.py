"""Writing the site: the three outputs, the records they link, the page's assets.

The site is written into a temporary folder beside the target and swapped in at the
end, so a failed build leaves the previous site as it was rather than half of a new
one. Only an empty folder or a site this command wrote is ever replaced: ``-o`` given
a wrong folder must not delete it. A record copy already in the site being replaced
is linked, not copied again: its name holds its content's digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from conformance.matrix.build import GENERATOR, Built
from conformance.matrix.diff_data import runs_script
from conformance.matrix.model import Matrix
from conformance.matrix.render_html import render_pages
from conformance.matrix.render_markdown import render_markdown

STATIC_FILES = ("matrix.css", "matrix.js", "diff.js")


class SiteError(Exception):
    """The site cannot be written there; the message says why."""


def matrix_json(matrix: Matrix) -> str:
    return json.dumps(dataclasses.asdict(matrix), indent=1, ensure_ascii=False) + "\n"


def site_files(built: Built) -> dict[str, str | bytes]:
    """Site-relative path -> content, for everything the site holds."""
    files: dict[str, str | bytes] = dict(render_pages(built.matrix))
    files["matrix.md"] = render_markdown(built.matrix)
    files["matrix.json"] = matrix_json(built.matrix)
    for history in built.matrix.histories:
        files[f"platforms/{history.column}.runs.js"] = runs_script(history, built.run_outcomes[history.column])
    static = resources.files("conformance.matrix") / "static"
    for name in STATIC_FILES:
        files[f"static/{name}"] = (static / name).read_bytes()
    return files


def _replaceable(target: Path) -> bool:
    if not target.exists():
        return True
    if not target.is_dir() or target.is_symlink():
        return False
    if not any(target.iterdir()):
        return True
    try:
        generated = json.loads((target / "matrix.json").read_text(encoding="utf-8"))["generated"]
        return generated["by"] == GENERATOR
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _copy_record(source: Path, digest: str, previous: Path, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if previous.is_file() and not previous.is_symlink():
        try:
            os.link(previous, path)
            return
        except OSError:
            pass  # another file system, or no hard links: copy it as below
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise SiteError(f"{source}: cannot copy the record into the site ({exc.strerror})") from None
    if hashlib.sha256(raw).hexdigest() != digest:
        raise SiteError(f"{source}: the record changed while the site was built; build again")
    path.write_bytes(raw)


def write_site(built: Built, target: str | Path) -> Path:
    target = Path(target)
    if not _replaceable(target):
        raise SiteError(f"refusing to replace {target}: it is neither empty nor a site "
                        f"that `{GENERATOR}` wrote")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for relative, content in site_files(built).items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.write_bytes(content)
        for relative, (source, digest) in built.copies.items():
            _copy_record(source, digest, target / relative, staging / relative)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
