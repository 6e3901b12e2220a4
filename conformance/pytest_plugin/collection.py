"""Which suites to collect, and the contract id every kit test carries."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from conformance.results.outcomes import NOT_SUPPORTED_PREFIX

CONTRACT_ID = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")


def suites_root() -> Path:
    # Found without importing the suites (or torch): collection is decided early.
    return Path(__file__).resolve().parent.parent / "suites"


def available_suites() -> list[str]:
    return sorted(
        path.name
        for path in suites_root().iterdir()
        if path.is_dir() and any(path.glob("test_*.py"))
    )


def suite_paths(selection: str | None) -> list[Path]:
    """Folders of the selected suites (all of them when ``selection`` is None)."""
    available = available_suites()
    names = available if not selection else [n.strip() for n in selection.split(",") if n.strip()]
    unknown = [name for name in names if name not in available]
    if unknown or not names:
        raise ValueError(
            f"unknown suite {', '.join(map(repr, unknown)) or '(none given)'} in "
            f"--suite (available: {', '.join(available)})"
        )
    return [suites_root() / name for name in names]


def contract_of_nodeid(nodeid: str, rootpath: Path) -> str | None:
    """The contract of a suite test from its node id alone, whatever rootdir pytest
    chose: a path argument outside the working folder (``--expectations FILE``, say)
    can move rootdir above the suites, and node ids then start with the suites' path
    (``conformance/suites/attention/...``) instead of ``attention/...``."""
    from conformance.suites.registry import contract_of_nodeid as registered

    try:
        prefix = suites_root().relative_to(rootpath.resolve()).as_posix() + "/"
    except ValueError:  # rootdir is not above the suites: ids are already relative to them
        prefix = ""
    return registered(nodeid.removeprefix(prefix) if prefix != "./" else nodeid)


def close_contracts(expression: str, shown: int = 5) -> list[str]:
    """Contract ids close to the words of a ``-k`` expression: those a word is part
    of, then those spelled like it."""
    from conformance.suites.registry import contracts

    known = list(contracts())
    words = [w for w in re.split(r"[^A-Za-z0-9_.]+", expression)
             if w and w not in ("and", "or", "not")]
    close: list[str] = []
    for word in words:
        close += [c for c in known if word.lower() in c]
        close += difflib.get_close_matches(word.lower(), known, n=shown, cutoff=0.6)
    return list(dict.fromkeys(close))[:shown]


def contract_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("contract")
    return marker.args[0] if marker and marker.args else None


class ContractCollection:
    """Collects the selected suites and tags every test with its contract id, for
    reports, records and ``-k`` (``-k platform.runtime`` selects by contract). A
    bridge (``PluginEntry.bridge``) picks the suites of a run without ``--suite``, and
    the suites it cannot map end ``not_supported`` with its reason."""

    def __init__(self, selection: str | None, bridge: dict | None = None) -> None:
        bridge = bridge or {}
        if selection is None and bridge.get("suites"):
            selection = ",".join(bridge["suites"])
        self.selected = suite_paths(selection)
        self.not_supported_suites: dict[str, str] = bridge.get("not_supported_suites", {})

    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        root = suites_root()
        if collection_path.parent == root and collection_path.is_dir():
            return collection_path not in self.selected
        return None

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        root = suites_root()
        for item in items:
            contract = contract_of(item)
            if contract is not None and not CONTRACT_ID.match(contract):
                raise pytest.UsageError(
                    f"{item.nodeid}: contract id {contract!r} is not of the form suite.area.name"
                )
            if contract is None and item.path.is_relative_to(root):
                raise pytest.UsageError(f"{item.nodeid}: kit test without a contract id")
            item.user_properties.append(("contract", contract))
            if contract is not None:
                item.extra_keyword_matches.add(contract)
                reason = self.not_supported_suites.get(contract.split(".")[0])
                if reason is not None:
                    item.add_marker(pytest.mark.skip(reason=NOT_SUPPORTED_PREFIX + reason))
