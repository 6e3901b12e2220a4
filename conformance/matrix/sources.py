"""Finding record files and deciding which of them the matrix may show.

A record is shown only when it reads safely (``conformance.results.reading``), matches
the record schema, its names and times read as what they are, it was made by a known
kit (``kits``) and names only that kit's contracts, its roll-ups match its tests, and
its signature, if any, matches its content and a key of its keyring. Anything else is
a ``Rejection`` with a one-line reason: the page is still built from the others and
lists what it left out, so missing data never looks like a result.

Keyrings (``allowed_signers``, see ``conformance.results.signing``): a record is
signed by a vendor when its key is in the ``allowed_signers`` file of the folder it
lies in, and built by CI when its key is in the one at the top of the records folder
it was found under.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from conformance.matrix.kits import KnownKits
from conformance.matrix.model import Rejection
from conformance.results import outcomes, reading, signing
from conformance.results.record import roll_up_contracts
from conformance.results.timestamps import parse_timestamp
from conformance.results.verify import (
    INVALID,
    Checking,
    name_and_time_problems,
    unknown_contracts_problem,
    verify_readable,
)

KEYRING_NAME = "allowed_signers"
RECORD_SUFFIX = ".json"
#: Names a record is often given by mistake (``x.JSON``, ``x.record``, ``x.json.txt``):
#: such files are named, never silently skipped.
_LOOKS_LIKE_A_RECORD = re.compile(r"\.(json|record)(\.[a-z0-9]+)?$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Accepted:
    path: Path
    digest: str  # sha256 of the file's bytes, as read: the record's identity in the index
    data: dict
    verdict: str  # the verdict's first word(s): CONFORMANT, NOT CONFORMANT, INCOMPLETE
    verdict_line: str
    trust: signing.Trust = signing.Trust(signing.SELF_REPORTED)
    released: bool = True  # made by a kit listed in released_kits.json

    @property
    def provenance(self) -> dict:
        return self.data["provenance"]

    @functools.cached_property
    def started(self) -> datetime.datetime:
        # Cached: the build sorts and groups every record by it, tens of thousands of times.
        return parse_timestamp(self.provenance["started_at"])

    @property
    def line(self) -> tuple[str, str, str]:
        """The platform line this record belongs to: distribution, plugin name and
        device name (a plugin name alone is no one's: two distributions may use it)."""
        plugin = self.provenance["plugin"]
        return plugin["distribution"], plugin["name"], self.provenance["device"]["name"]


@dataclasses.dataclass(frozen=True)
class Found:
    """The files under the given paths: records, and files named like one but not."""

    records: list[tuple[Path, Path | None]]  # each with the folder it must stay inside
    misnamed: list[Path]
    missing: list[Rejection]


def record_files(paths: Iterable[str | os.PathLike]) -> Found:
    """Every ``*.json`` under the given files and folders (folders searched
    recursively, without following symlinked folders), each with the folder it must
    stay inside once symlinks are resolved (None for a file named directly)."""
    found, misnamed, missing = [], [], []
    for given in map(Path, paths):
        if given.is_dir():
            before = len(found)
            for folder, subfolders, names in os.walk(given):
                subfolders.sort()
                folder = Path(folder)  # once per folder: a program's folders hold thousands of records
                for name in sorted(names):
                    if name.endswith(RECORD_SUFFIX):
                        found.append((folder / name, given))
                    elif _LOOKS_LIKE_A_RECORD.search(name):
                        misnamed.append(folder / name)
            if len(found) == before:
                missing.append(Rejection(str(given), f"a records folder that holds no record (*{RECORD_SUFFIX})"))
        elif given.exists() or given.is_symlink():
            found.append((given, None))
        else:
            missing.append(Rejection(str(given), "no such file or folder"))
    return Found(found, misnamed, missing)


def load_records(paths: Iterable[str | os.PathLike], kits: KnownKits, now: datetime.datetime,
                 allow_unreleased: bool = False,
                 contracts: frozenset[str] | None = None) -> tuple[list[Accepted], list[Rejection]]:
    """The records under ``paths`` the matrix may show, and the rest with reasons.
    Records of a kit that is not a listed release are rejected unless
    ``allow_unreleased``; ``contracts`` are the installed kit's contract ids (None:
    its mustpass list's)."""
    files = record_files(paths)
    rejected = list(files.missing)
    rejected += [Rejection(str(path), f"named like a record but not *{RECORD_SUFFIX}: rename it "
                                      f"to end in {RECORD_SUFFIX}, or move it out")
                 for path in files.misnamed]
    keyrings: dict[Path, signing.Keyring] = {}
    accepted = []
    for path, within in files.records:
        try:
            accepted.append(judge(path, within, kits, now, allow_unreleased, contracts, keyrings))
        except RecordRejected as exc:
            rejected.append(exc.rejection)
    return accepted, rejected


class RecordRejected(Exception):
    """The file is not a record the matrix may show; ``rejection`` says why."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.reason)
        self.rejection = rejection


def judge(path: Path, within: Path | None, kits: KnownKits, now: datetime.datetime,
          allow_unreleased: bool, contracts: frozenset[str] | None,
          keyrings: dict[Path, signing.Keyring]) -> Accepted:
    """The record at ``path`` as the matrix shows it, or ``RecordRejected``;
    ``keyrings`` caches the keyrings read so far, by folder."""
    try:
        # The top of a records folder holds the CI's keys, never a vendor's.
        vendor = None if path.parent == within else _keyring(path.parent, keyrings)
        checking = Checking(now, vendor, _keyring(within, keyrings) if within is not None else None,
                            contracts)
        record = _accept(path, within, kits, checking)
        if not allow_unreleased and not record.released:
            raise reading.UnreadableRecord(
                f"made by kit {record.provenance['kit_version']}, which is not a release "
                "listed in released_kits.json (a development kit); --allow-unreleased "
                "shows it, marked as such")
        return record
    except (reading.UnreadableRecord, signing.SigningError) as exc:
        raise RecordRejected(Rejection(reading.printable(str(path)), reading.printable(str(exc)))) from None


def keyring_files(path: Path, within: Path | None) -> tuple[Path, ...]:
    """The keyring files that judge the record at ``path`` (whether or not they exist)."""
    vendor = () if path.parent == within else (path.parent / KEYRING_NAME,)
    return vendor + ((within / KEYRING_NAME,) if within is not None else ())


def _keyring(folder: Path, cache: dict[Path, signing.Keyring]) -> signing.Keyring:
    if folder not in cache:
        cache[folder] = signing.load_keyring(folder / KEYRING_NAME)
    return cache[folder]


def _accept(path: Path, within: Path | None, kits: KnownKits, checking: Checking) -> Accepted:
    raw, data = reading.read_record(path, within)
    problems = reading.schema_problems(data, raw)
    if problems:
        raise reading.UnreadableRecord(f"off the record schema: {_one_line(problems)}")
    problems = name_and_time_problems(data, checking.now)
    if problems:
        raise reading.UnreadableRecord(_one_line(problems))
    kit_problem = kits.problem(data["provenance"])
    if kit_problem:
        raise reading.UnreadableRecord(kit_problem)
    if not kits.is_installed(data["provenance"]):
        return _accept_earlier_release(path, raw, data, kits, checking)
    verdict = verify_readable(data, path, checking)  # its field problems are checked above
    if verdict.exit_code == INVALID:
        raise reading.UnreadableRecord(verdict.line.removeprefix(reading.printable(f"INVALID: {path}: ")))
    return Accepted(path, hashlib.sha256(raw).hexdigest(), data, verdict.line.split(":", 1)[0],
                    verdict.line, verdict.trust,
                    kits.release_of(data["provenance"]) is not None)


def _accept_earlier_release(path: Path, raw: bytes, data: dict, kits: KnownKits,
                            checking: Checking) -> Accepted:
    """This kit's verifier judges only its own records; what every kit checks of an
    earlier release's is checked here, as that release's verifier would."""
    release, kit = kits.release_of(data["provenance"]), data["provenance"]["kit_version"]
    unknown = unknown_contracts_problem(data, release.contracts, kit) if release else None
    if unknown:
        raise reading.UnreadableRecord(unknown)
    if data["contracts"] != roll_up_contracts(data["tests"]) or \
            data["summary"] != outcomes.count(t["outcome"] for t in data["tests"]):
        raise reading.UnreadableRecord("its roll-ups do not match its tests (edited by hand?)")
    trust, problem = signing.check_signature(data, checking.vendor_keyring, checking.ci_keyring)
    if problem:
        raise reading.UnreadableRecord(problem)
    return Accepted(path, hashlib.sha256(raw).hexdigest(), data, "NOT CHECKED",
                    f"not checked by this kit ({kits.installed.version}): the record is "
                    f"from kit {kit}, whose own `conformance verify` checks it; {trust.describe()}",
                    trust)


def _one_line(problems: list[str]) -> str:
    return problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
