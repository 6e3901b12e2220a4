"""Which kits a record may come from, and how their contract versions compare.

A record names the kit version that made it and a hash of that kit's suite sources.
The matrix shows records of the installed kit and of earlier releases listed in
``released_kits.json``; any other pair of version and hash is a kit whose suites were
changed (a tampered or unreleased kit), and its record is rejected, because its
passes prove nothing about the released contracts.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from importlib import resources

from conformance.results.provenance import suite_hash

#: A final release per PEP 440: no pre-, post-, dev- or local part.
_FINAL_RELEASE = re.compile(r"^\d+(\.\d+)*$")


@dataclasses.dataclass(frozen=True)
class Kit:
    version: str
    contract_version: str
    suite_hash: str


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


def installed_kit() -> Kit:
    text = (resources.files("conformance.results") / "mustpass.json").read_text()
    mustpass = json.loads(text)
    return Kit(mustpass["kit_version"], mustpass["contract_version"], suite_hash())


@functools.cache
def known_kits() -> KnownKits:
    text = (resources.files("conformance.matrix") / "released_kits.json").read_text()
    released = tuple(Kit(r["version"], r["contract_version"], r["suite_hash"])
                     for r in json.loads(text)["releases"])
    return KnownKits(installed_kit(), released)


def is_final_release(version: str) -> bool:
    return bool(_FINAL_RELEASE.match(version))


def version_key(version: str) -> tuple:
    """Sort key for dotted versions ("0.10" after "0.9"); non-numeric parts sort as text."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in version.split("."))
