"""A kit release keeps its contract's snapshot, and bumps the contract version when the
contract moved.

``conformance release`` calls ``check`` before it records a release and ``keep``
after: the installed contract's snapshot becomes ``interfaces/kit-VERSION.json``, for
good, so ``conformance drift --from VERSION`` works from then on. ``CONTRACT_VERSION``
must change whenever a rule or a signature of the contract does
(``conformance/contract/version.py``), so a release whose contract differs from the
previous kept release's under the same contract version is refused, naming the drift
report to put in the CHANGELOG; so is re-releasing a version with another contract.
"""

from __future__ import annotations

import json
from pathlib import Path

from packaging.version import InvalidVersion, Version

from conformance.tiers.drift import compare
from conformance.tiers.interface import INTERFACES, snapshot, snapshot_document


class ContractReleaseError(Exception):
    """The contract cannot be released as it is; the message says why and what to do."""


def _kept(folder: Path) -> dict[Version, dict]:
    kept = {}
    for path in folder.glob("kit-*.json"):
        try:
            kept[Version(path.stem.removeprefix("kit-"))] = json.loads(path.read_text(encoding="utf-8"))
        except (InvalidVersion, ValueError):
            continue  # not a release snapshot this kit wrote
    return kept


def check(kit_version: str, contract_version: str, interface: dict | None = None,
          folder: Path = INTERFACES) -> None:
    """Raise ``ContractReleaseError`` unless the installed contract (``interface``) may
    be released as kit ``kit_version`` under ``contract_version``."""
    interface = snapshot() if interface is None else interface
    kept, version = _kept(folder), Version(kit_version)
    if version in kept:
        if kept[version]["interface"] != interface:
            raise ContractReleaseError(
                f"kit {kit_version} was released with another contract (conformance drift --from "
                f"{kit_version}): a changed contract needs a new kit version")
        return
    earlier = [v for v in kept if v < version]
    if not earlier:
        return
    previous = kept[max(earlier)]
    changes = compare(previous["interface"], interface)
    if changes and previous["contract_version"] == contract_version:
        raise ContractReleaseError(
            f"the contract changed since kit {previous['kit_version']} ({len(changes)} changes: "
            f"conformance drift --from {previous['kit_version']}) but CONTRACT_VERSION is still "
            f"{contract_version}: bump it in conformance/contract/version.py and put the drift "
            "report in the release's CHANGELOG section")


def keep(kit_version: str, contract_version: str, interface: dict | None = None,
         folder: Path = INTERFACES) -> tuple[Path, bool]:
    """Write the released contract's snapshot (once); True when it was written now."""
    path = folder / f"kit-{kit_version}.json"
    if path.exists():
        return path, False
    interface = snapshot() if interface is None else interface
    document = snapshot_document(interface, kit_version, contract_version)
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path, True
