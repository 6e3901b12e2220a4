"""Every contract of the suites: the ids the tests carry, with the rules the contract
states for them.

A contract's id comes from its tests' ``contract`` markers and its rule from the
contract's docstrings (``conformance.contract.rules``), each written once, so the
mustpass list, ``conformance contracts`` and the support matrix's rows cannot drift
from the contract or from what is tested (``python -m conformance.dev regenerate``
writes the shipped mustpass list).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import conformance.suites
from conformance.contract.rules import rule_texts

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


def test_description(function) -> str:
    """A test's docstring as one line: how it checks its contract's rule."""
    return " ".join((inspect.getdoc(function) or "").split())


@functools.cache
def contracts() -> dict[str, str]:
    """Every contract id the suites test, with its rule as the contract states it
    (empty for an id the contract states no rule for, which the kit's rule audit
    refuses)."""
    tested = {contract_marker(function) for _, _, function in suite_test_functions()} - {None}
    stated = rule_texts()
    return {contract: stated.get(contract, "") for contract in sorted(tested)}


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


def mustpass_text() -> str:
    """``results/mustpass.json`` as it must read."""
    return json.dumps(mustpass(), indent=1) + "\n"
