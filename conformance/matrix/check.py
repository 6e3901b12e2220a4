"""``conformance matrix check``: the bot that reviews records submitted to ``matrix/``.

Records are submitted by pull request into ``matrix/records/<plugin>/`` (as with
Kubernetes' conformance repository). A submission is accepted when every record under
the folder is one the matrix shows (reads safely, on schema, from a known kit, roll-ups
intact), is complete, was made by a released kit version (no development or local
build), and lies in the folder of the plugin it names; and the site builds from them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from conformance.matrix.build import build_matrix
from conformance.matrix.kits import is_final_release
from conformance.matrix.site import write_site


def check_submissions(folder: str | Path) -> tuple[int, list[str]]:
    """How many records the folder holds, and one line per problem found."""
    folder = Path(folder)
    if not folder.is_dir():
        return 0, [f"{folder}: not a folder of submitted records"]
    built = build_matrix([folder])
    problems = [f"{r.path}: {r.reason}" for r in built.matrix.rejected]
    for record in built.records:
        provenance = record.provenance
        plugin, kit = provenance["plugin"]["name"], provenance["kit_version"]
        if not record.data["complete"]:
            problems.append(f"{record.path}: the run did not finish (incomplete record)")
        if not is_final_release(kit):
            problems.append(f"{record.path}: made by kit {kit}, not a released version")
        placed_in = record.path.relative_to(folder).parts[0]
        if placed_in != plugin or len(record.path.relative_to(folder).parts) != 2:
            problems.append(f"{record.path}: a record of plugin {plugin!r} belongs in "
                            f"{folder / plugin}/, directly")
    if not built.records:
        problems.append(f"{folder}: holds no record")
    with tempfile.TemporaryDirectory() as scratch:
        write_site(built, Path(scratch) / "site")
    return len(built.records) + len(built.matrix.rejected), problems
