"""Writing the site: the three outputs, the records they link, the page's assets.

The site is written into a temporary folder beside the target and swapped in at the
end, so a failed build leaves the previous site as it was rather than half of a new
one. Only an empty folder or a site this command wrote is ever replaced: ``-o`` given
a wrong folder must not delete it. A record copy already in the site being replaced
is linked, not copied again: its name holds its content's digest; a folder of copies
that is wanted as it is (a platform line with no new record) is moved over whole.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from stat import S_ISDIR, S_ISREG

from conformance.matrix import codec
from conformance.matrix.build import GENERATOR, Built
from conformance.matrix.collector import collection_paused
from conformance.matrix.index import RecordIndex, SiteFile
from conformance.matrix.model import Column, History, Matrix
from conformance.matrix.render_html import Page, planned_pages
from conformance.matrix.render_markdown import render_markdown

STATIC_FILES = ("matrix.css", "matrix.js", "diff.js")


class SiteError(Exception):
    """The site cannot be written there; the message says why."""


def matrix_json(matrix: Matrix, platform_digests: dict[str, str]) -> str:
    """``matrix.json``: the model but each column's cells and each line's history,
    which are in the line's ``platforms/ID.json``, named on its column with its sha256,
    so a signature over this file covers them too. Compact, as the platforms' files
    are: it is written on every build, and indenting takes ``json``'s pure-Python
    encoder, a sixth of a one-record rebuild of 10,000 records."""
    document = {name: codec.to_data(getattr(matrix, name)) for name in codec.field_names(Matrix)
                if name not in ("columns", "histories")}
    document["columns"] = [{**{name: codec.to_data(getattr(column, name)) for name in codec.field_names(Column)
                               if name != "cells"},
                            "file": platform_file(column.id),
                            "sha256": platform_digests[platform_file(column.id)]}
                           for column in matrix.columns]
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def platform_file(column_id: str) -> str:
    return f"platforms/{column_id}.json"


def planned_files(built: Built, records_index: RecordIndex) -> dict[str, Page]:
    """Site-relative path -> (key, maker) for the files made from the model; the
    others (``matrix.json``, ``matrix.md``, static files, record copies) are written
    by ``write_site`` on every build. A column the build read as an outline is made
    whole from the index only when its platform's files are made again."""
    def platform_json(column_id: str) -> str:
        return built.platform_files.get(column_id) or records_index.cached_model(column_id)

    def whole(column: Column, history: History) -> tuple[Column, History]:
        if column.id not in built.outlined:
            return column, history
        model = json.loads(platform_json(column.id))
        return codec.column_from(model["column"]), codec.history_from(model["history"])

    files = planned_pages(built.matrix, built.line_keys, whole)
    for column in built.matrix.columns:
        key = built.line_keys.get(column.id)
        files[platform_file(column.id)] = (key and f"json {key}", lambda c=column.id: platform_json(c))
        files[f"platforms/{column.id}.runs.js"] = (key and f"runs {key}",
                                                   lambda c=column.id: built.run_scripts[c])
    return files


def site_files(built: Built) -> dict[str, str | bytes]:
    """Site-relative path -> content, for everything the site holds but the record copies."""
    with RecordIndex(built.index if built.index is not None else ":memory:") as records_index:
        files: dict[str, str | bytes] = {path: make() for path, (_, make) in
                                         planned_files(built, records_index).items()}
    digests = {path: hashlib.sha256(files[path].encode()).hexdigest() for path in files
               if path.startswith("platforms/") and path.endswith(".json")}
    files["matrix.json"] = matrix_json(built.matrix, digests)
    files["matrix.md"] = render_markdown(built.matrix)
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
    """``path`` (in a folder made already) as a link to ``previous``, the same copy
    in the site being replaced, or else as a copy of ``source``."""
    try:
        if S_ISREG(previous.lstat().st_mode):
            os.link(previous, path)
            return
    except OSError:
        pass  # not there, another file system, or no hard links: copy it as below
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise SiteError(f"{source}: cannot copy the record into the site ({exc.strerror})") from None
    if hashlib.sha256(raw).hexdigest() != digest:
        raise SiteError(f"{source}: the record changed while the site was built; build again")
    path.write_bytes(raw)


def _copy_records(copies: dict[str, tuple[Path, str]], target: Path, staging: Path) -> list[Path]:
    """Make the record copies in ``staging``, but for the folders of the site being
    replaced that hold exactly the copies wanted there (a platform line's with no new
    record), which are returned: they are moved over whole when the site is swapped
    in, as linking 10,000 copies and unlinking the old ones was a third of a warm build."""
    by_folder: dict[Path, dict[str, tuple[Path, str]]] = {}
    for relative, entry in copies.items():
        by_folder.setdefault(Path(relative).parent, {})[relative] = entry
    unchanged = []
    for folder, entries in by_folder.items():
        if _holds_exactly(target / folder, {Path(relative).name for relative in entries}):
            unchanged.append(folder)
            continue
        (staging / folder).mkdir(parents=True, exist_ok=True)
        for relative, (source, digest) in entries.items():
            _copy_record(source, digest, target / relative, staging / relative)
    return unchanged


def _holds_exactly(folder: Path, names: set[str]) -> bool:
    """Whether ``folder`` is a folder (not a symlink) of regular files named ``names``
    and nothing else: a copy's name holds its content's digest."""
    try:
        if not S_ISDIR(folder.lstat().st_mode):
            return False
        with os.scandir(folder) as entries:
            found = {entry.name: entry.is_file(follow_symlinks=False) for entry in entries}
    except OSError:
        return False
    return found.keys() == names and all(found.values())


@collection_paused()
def write_site(built: Built, target: str | Path) -> Path:
    target = Path(target)
    if not _replaceable(target):
        raise SiteError(f"refusing to replace {target}: it is neither empty nor a site "
                        f"that `{GENERATOR}` wrote")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    site = str(target.resolve())
    try:
        with RecordIndex(built.index if built.index is not None else ":memory:") as records_index, \
                concurrent.futures.ThreadPoolExecutor(1) as copier:
            # The record copies (1.4 GB for 10,000 records) mostly wait on the disk and
            # the pages mostly compute: the copies are made beside the pages.
            copied = copier.submit(_copy_records, built.copies, target, staging)
            previous = records_index.site_files(site) if target.is_dir() else {}
            written = _write_planned(planned_files(built, records_index), previous, target, staging)
            digests = {path: file.sha256 for path, file in written.items()}
            _write(staging / "matrix.json", matrix_json(built.matrix, digests))
            _write(staging / "matrix.md", render_markdown(built.matrix))
            static = resources.files("conformance.matrix") / "static"
            for name in STATIC_FILES:
                _write(staging / "static" / name, (static / name).read_bytes())
            unchanged = copied.result()
            if target.exists():
                for folder in unchanged:
                    (staging / folder).parent.mkdir(parents=True, exist_ok=True)
                    (target / folder).rename(staging / folder)
                shutil.rmtree(target)
            staging.rename(target)
            records_index.wrote_site(site, {path: file for path, file in written.items() if file.key})
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _write_planned(files: dict[str, Page], previous: dict[str, SiteFile], target: Path,
                   staging: Path) -> dict[str, SiteFile]:
    """Write each file, or link it from the site being replaced when it was made
    there with the same key and is as it was written."""
    written = {}
    for relative, (key, make) in files.items():
        kept = previous.get(relative)
        if key is not None and kept is not None and kept.key == key and _links(target / relative, kept,
                                                                                staging / relative):
            written[relative] = kept
            continue
        content = make().encode("utf-8")
        _write(staging / relative, content)
        stat = (staging / relative).stat()
        written[relative] = SiteFile(key, hashlib.sha256(content).hexdigest(), stat.st_size, stat.st_mtime_ns)
    return written


def _links(previous: Path, kept: SiteFile, path: Path) -> bool:
    """Link ``previous`` to ``path`` when it is a file of the size and modification time
    it was written with (as make and rsync tell a changed file: reading and hashing
    the hundreds of megabytes a large site reuses took longer than the rest of a build)."""
    try:
        stat = previous.lstat()
        if not S_ISREG(stat.st_mode) or (stat.st_size, stat.st_mtime_ns) != (kept.size, kept.mtime_ns):
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        os.link(previous, path)
        return True
    except OSError:
        return False  # gone, or a file system without hard links: made again


def _write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
