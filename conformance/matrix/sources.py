"""Finding record files and deciding which of them the matrix may show.

A record is shown only when it reads safely (``conformance.results.reading``), matches
the record schema, was made by a known kit (``kits``), and its roll-ups match its
tests. Anything else is a ``Rejection`` with a one-line reason: the page is still built
from the others and lists what it left out, so missing data never looks like a result.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
from collections.abc import Iterable
from pathlib import Path

from conformance.matrix.kits import KnownKits
from conformance.matrix.model import Rejection
from conformance.results import outcomes, reading
from conformance.results.record import roll_up_contracts
from conformance.results.verify import INVALID, verify_loaded


@dataclasses.dataclass(frozen=True)
class Accepted:
    path: Path
    raw: bytes
    data: dict
    verdict: str  # the verdict's first word(s): CONFORMANT, NOT CONFORMANT, INCOMPLETE
    verdict_line: str

    @property
    def provenance(self) -> dict:
        return self.data["provenance"]

    @property
    def started(self) -> datetime.datetime:
        return parse_time(self.provenance["started_at"])

    @property
    def line(self) -> tuple[str, str]:
        """The platform line this record belongs to: plugin name and device name."""
        return self.provenance["plugin"]["name"], self.provenance["device"]["name"]


def parse_time(text: str) -> datetime.datetime:
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)


def record_files(paths: Iterable[str | os.PathLike]) -> tuple[list[tuple[Path, Path | None]], list[Rejection]]:
    """Every ``*.json`` under the given files and folders (folders searched
    recursively, without following symlinked folders), each with the folder it must
    stay inside once symlinks are resolved (None for a file named directly)."""
    found, missing = [], []
    for given in map(Path, paths):
        if given.is_dir():
            for folder, subfolders, names in os.walk(given):
                subfolders.sort()
                found.extend((Path(folder) / name, given) for name in sorted(names)
                             if name.endswith(".json"))
        elif given.exists() or given.is_symlink():
            found.append((given, None))
        else:
            missing.append(Rejection(str(given), "no such file or folder"))
    return found, missing


def load_records(paths: Iterable[str | os.PathLike], kits: KnownKits) -> tuple[list[Accepted], list[Rejection]]:
    files, rejected = record_files(paths)
    accepted = []
    for path, within in files:
        try:
            accepted.append(_accept(path, within, kits))
        except reading.UnreadableRecord as exc:
            rejected.append(Rejection(str(path), str(exc)))
    return accepted, rejected


def _accept(path: Path, within: Path | None, kits: KnownKits) -> Accepted:
    raw, data = reading.read_record(path, within)
    problems = reading.schema_problems(data)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise reading.UnreadableRecord(f"off the record schema: {problems[0]}{more}")
    kit_problem = kits.problem(data["provenance"])
    if kit_problem:
        raise reading.UnreadableRecord(kit_problem)
    if not kits.is_installed(data["provenance"]):
        # This kit's verifier checks only its own records; the roll-ups of an earlier
        # release's are checked here, as that release's verifier would.
        if data["contracts"] != roll_up_contracts(data["tests"]) or \
                data["summary"] != outcomes.count(t["outcome"] for t in data["tests"]):
            raise reading.UnreadableRecord("its roll-ups do not match its tests (edited by hand?)")
        kit = data["provenance"]["kit_version"]
        return Accepted(path, raw, data, "NOT CHECKED",
                        f"not checked by this kit ({kits.installed.version}): the record is "
                        f"from kit {kit}, whose own `conformance verify` checks it")
    verdict = verify_loaded(data, path)
    if verdict.exit_code == INVALID:
        raise reading.UnreadableRecord(verdict.line.removeprefix(f"INVALID: {path}: "))
    return Accepted(path, raw, data, verdict.line.split(":", 1)[0], verdict.line)
