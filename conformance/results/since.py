"""The contract version in which each contract first appeared.

A plugin author reading a failure wants to know whether the rule is new; a release's
notes list the contracts it adds. ``contracts_since.json`` keeps, for every contract
of the suites, the contract version it was added in: ``python -m conformance.dev
regenerate`` adds a new contract with the current ``CONTRACT_VERSION`` and never
changes the version of one already listed.
"""

from __future__ import annotations

import json
from pathlib import Path

SINCE_PATH = Path(__file__).resolve().parent / "contracts_since.json"


def load_since(path: Path = SINCE_PATH) -> dict[str, str]:
    """Contract id -> the contract version it was added in."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))["since"]
    except FileNotFoundError:
        return {}


def updated_since(known: dict[str, str], contracts, contract_version: str) -> dict[str, str]:
    """``known`` for the ``contracts`` the suites have now: each keeps the version it
    has, a new one takes ``contract_version``, one the suites dropped goes."""
    return {contract: known.get(contract, contract_version) for contract in sorted(contracts)}


def since_text(contracts, contract_version: str, path: Path = SINCE_PATH) -> str:
    """``contracts_since.json`` as it must read."""
    document = {"about": "The contract version each contract was added in; written by "
                         "python -m conformance.dev regenerate, never by hand.",
                "since": updated_since(load_since(path), contracts, contract_version)}
    return json.dumps(document, indent=1) + "\n"
