"""Every contract of the suites, read from the tests themselves.

A contract's id comes from its tests' ``contract`` markers and its rule from their
docstrings, so the mustpass list, ``conformance contracts`` and the support
matrix's rows are generated from one source and cannot drift from what is tested.

    python -m conformance.suites.registry --write   # regenerate the shipped mustpass
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import pkgutil
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import conformance.suites

MUSTPASS_PATH = Path(__file__).resolve().parent.parent / "results" / "mustpass.json"


def suite_test_functions() -> Iterator[tuple[str, str, object]]:
    """``(module name, function name, function)`` of every test in the suites."""
    for info in pkgutil.walk_packages(conformance.suites.__path__, "conformance.suites."):
        if not info.name.rsplit(".", 1)[-1].startswith("test_"):
            continue
        module = importlib.import_module(info.name)
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("test_") and function.__module__ == module.__name__:
                yield info.name, name, function


def contract_marker(function) -> str | None:
    ids = [m.args[0] for m in getattr(function, "pytestmark", []) if m.name == "contract"]
    return ids[0] if len(ids) == 1 else None


def rule_of(function) -> str:
    """A test's docstring as one line: the rule it checks."""
    return " ".join((inspect.getdoc(function) or "").split())


@functools.cache
def contracts() -> dict[str, str]:
    """Every contract id with its rule (the docstrings of its tests, joined)."""
    rules: dict[str, list[str]] = {}
    for _, _, function in suite_test_functions():
        contract = contract_marker(function)
        if contract is not None:
            rule = rule_of(function)
            if rule not in rules.setdefault(contract, []):
                rules[contract].append(rule)
    return {contract: " ".join(found) for contract, found in sorted(rules.items())}


@functools.cache
def _contracts_by_test() -> dict[tuple[str, str], str]:
    return {
        (module, name): contract
        for module, name, function in suite_test_functions()
        if (contract := contract_marker(function)) is not None
    }


def contract_of_nodeid(nodeid: str) -> str | None:
    """The contract of a suite test from its node id alone (``attention/test_x.py::
    test_y[case]``), for reports that carry nothing else, such as a crashed worker's."""
    path, _, rest = nodeid.partition("::")
    if not path.endswith(".py"):
        return None
    module = "conformance.suites." + path.removesuffix(".py").replace("/", ".")
    return _contracts_by_test().get((module, re.split(r"[\[:]", rest)[0]))


def mustpass() -> dict:
    """The mustpass list of this kit release, as shipped in ``results/mustpass.json``."""
    from conformance._version import __version__
    from conformance.contract.version import CONTRACT_VERSION

    return {"kit_version": __version__, "contract_version": CONTRACT_VERSION,
            "contracts": contracts()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate or check the mustpass list.")
    parser.add_argument("--write", action="store_true", help=f"write {MUSTPASS_PATH.name}")
    args = parser.parse_args(argv)
    text = json.dumps(mustpass(), indent=1) + "\n"
    if args.write:
        MUSTPASS_PATH.write_text(text)
        print(f"wrote {len(contracts())} contracts to {MUSTPASS_PATH}")
        return 0
    if MUSTPASS_PATH.read_text() != text:
        print(f"{MUSTPASS_PATH} is stale: run python -m conformance.suites.registry --write")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
