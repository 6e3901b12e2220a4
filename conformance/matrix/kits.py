"""Which kits a record may come from, and how their contract versions compare.

A record names the kit version that made it and a hash of that kit's suite sources.
The matrix shows records of the installed kit and of the releases listed in
``released_kits.json``; any other pair of version and hash is a kit whose suites were
changed (a tampered or unreleased kit), and its record is rejected, because its
passes prove nothing about the released contracts. A release lists its contract ids,
so a record of it may name no other.

``cut_release`` (``conformance release``) adds the installed kit to that file: its
version (a final one), contract version, suite hash and contract ids.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from importlib import resources
from pathlib import Path

from conformance.results.provenance import suite_hash

#: A final release per PEP 440: no pre-, post-, dev- or local part.
_FINAL_RELEASE = re.compile(r"^\d+(\.\d+)*$")


@dataclasses.dataclass(frozen=True)
class Kit:
    version: str
    contract_version: str
    suite_hash: str
    #: The kit's contract ids (not part of its identity: version and hash are).
    contracts: frozenset[str] = dataclasses.field(default=frozenset(), compare=False)


class ReleaseError(Exception):
    """The kit cannot be released as it is; the message says why."""


@dataclasses.dataclass(frozen=True)
class KnownKits:
    installed: Kit
    released: tuple[Kit, ...] = ()

    def problem(self, provenance: dict) -> str | None:
        """Why a record with this provenance is not from a known kit (None if it is)."""
        claimed = Kit(provenance["kit_version"], provenance["contract_version"],
                      provenance["suite_hash"])
        if claimed in (self.installed, *self.released):
            return None
        same_version = [k for k in (self.installed, *self.released) if k.version == claimed.version]
        if same_version:
            return (f"made by a modified kit: its suite hash is not kit {claimed.version}'s "
                    f"(suites changed after the release, or the record was edited)")
        return f"made by kit {claimed.version}, which is neither this kit nor a known release"

    def is_installed(self, provenance: dict) -> bool:
        return (provenance["kit_version"], provenance["suite_hash"]) == (
            self.installed.version, self.installed.suite_hash)

    def release_of(self, provenance: dict) -> Kit | None:
        """The listed release that made a record with this provenance, if any."""
        claimed = (provenance["kit_version"], provenance["suite_hash"])
        return next((k for k in self.released if (k.version, k.suite_hash) == claimed), None)


def installed_kit() -> Kit:
    text = (resources.files("conformance.results") / "mustpass.json").read_text()
    mustpass = json.loads(text)
    return Kit(mustpass["kit_version"], mustpass["contract_version"], suite_hash(),
               frozenset(mustpass["contracts"]))


def released_kits_path() -> Path:
    return Path(str(resources.files("conformance.matrix") / "released_kits.json"))


def read_releases(path: Path | None = None) -> tuple[Kit, ...]:
    document = json.loads((path or released_kits_path()).read_text(encoding="utf-8"))
    return tuple(Kit(r["version"], r["contract_version"], r["suite_hash"], frozenset(r["contracts"]))
                 for r in document["releases"])


@functools.cache
def known_kits() -> KnownKits:
    return KnownKits(installed_kit(), read_releases())


def cut_release(path: Path | None = None, kit: Kit | None = None) -> tuple[Kit, bool]:
    """Record ``kit`` (the installed one) as released in ``path`` (the shipped
    ``released_kits.json``); True when it was added, False when already there."""
    path, kit = path or released_kits_path(), kit or installed_kit()
    if not is_final_release(kit.version):
        raise ReleaseError(f"kit {kit.version} is not a final release version "
                           "(no pre-, post-, dev- or local part): set one in conformance/_version.py")
    document = json.loads(path.read_text(encoding="utf-8"))
    same = [r for r in document["releases"] if r["version"] == kit.version]
    if same and same[0]["suite_hash"] != kit.suite_hash:
        raise ReleaseError(f"kit {kit.version} was released with other suites ({same[0]['suite_hash']}); "
                           "changed suites need a new version")
    if same:
        return kit, False
    document["releases"].append({"version": kit.version, "contract_version": kit.contract_version,
                                 "suite_hash": kit.suite_hash, "contracts": sorted(kit.contracts)})
    document["releases"].sort(key=lambda r: version_key(r["version"]))
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return kit, True


def is_final_release(version: str) -> bool:
    return bool(_FINAL_RELEASE.match(version))


def version_key(version: str) -> tuple:
    """Sort key for dotted versions ("0.10" after "0.9"); non-numeric parts sort as text."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in version.split("."))
