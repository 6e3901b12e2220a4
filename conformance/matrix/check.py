"""``conformance matrix check``: the bot that reviews records submitted to ``matrix/``.

Records are submitted by pull request into ``matrix/records/<plugin>/`` (as with
Kubernetes' conformance repository). A submission is accepted when every record under
the folder is one the matrix shows (reads safely, on schema, names and times that read
as what they are, from a released kit unless ``allow_unreleased``, only that kit's
contracts, roll-ups intact, a signature that matches its keyring if signed), is
complete, lies in the folder of the plugin it names, and is signed by a key of that
folder's keyring if it has one (a vendor who signs cannot be impersonated by an
unsigned record in its folder); when no two names read alike
and no plugin name is used by a second distribution (``names``); when no file is named
like a record without being one; and when the site builds from them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from conformance.matrix.build import build_matrix
from conformance.matrix.names import name_problems
from conformance.matrix.site import write_site
from conformance.matrix.sources import KEYRING_NAME
from conformance.results import reading, signing


def check_submissions(folder: str | Path, allow_unreleased: bool = False) -> tuple[int, list[str]]:
    """How many records the folder holds, and one line per problem found."""
    folder = Path(folder)
    if not folder.is_dir():
        return 0, [f"{folder}: not a folder of submitted records"]
    built = build_matrix([folder], allow_unreleased=allow_unreleased)
    problems = [f"{r.path}: {r.reason}" for r in built.matrix.rejected]
    for record in built.records:
        plugin = record.provenance["plugin"]["name"]
        if not record.data["complete"]:
            problems.append(f"{record.path}: the run did not finish (incomplete record)")
        placed_in = record.path.relative_to(folder).parts[0]
        if placed_in != plugin or len(record.path.relative_to(folder).parts) != 2:
            problems.append(f"{record.path}: a record of plugin {plugin!r} belongs in "
                            f"{folder / plugin}/, directly")
        elif record.trust.level == signing.SELF_REPORTED and \
                signing.load_keyring(record.path.parent / KEYRING_NAME).entries:
            problems.append(f"{record.path}: unsigned, in a folder whose {KEYRING_NAME} says its "
                            "records are signed: sign it with one of those keys")
    problems += name_problems(built.records)
    with tempfile.TemporaryDirectory() as scratch:
        write_site(built, Path(scratch) / "site")
    files = len(built.records) + sum(1 for r in built.matrix.rejected if not Path(r.path).is_dir())
    return files, [reading.printable(problem) for problem in problems]
