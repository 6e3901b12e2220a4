"""Every test of the kit's suites says which contract and which rule it checks."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import conformance.suites
from conformance.pytest_plugin.collection import CONTRACT_ID


def _suite_tests():
    for module_info in pkgutil.walk_packages(conformance.suites.__path__, "conformance.suites."):
        if not module_info.name.rsplit(".", 1)[-1].startswith("test_"):
            continue
        module = importlib.import_module(module_info.name)
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("test_") and function.__module__ == module.__name__:
                yield f"{module_info.name}.{name}", function


SUITE_TESTS = dict(_suite_tests())


def test_suites_have_tests():
    """The suites are not empty."""
    assert len(SUITE_TESTS) > 20


@pytest.mark.parametrize("name", sorted(SUITE_TESTS))
def test_suite_test_names_its_contract_and_rule(name):
    """Each suite test carries one contract id of the form suite.area.name, whose
    suite is the suite it lives in, and a docstring stating the rule."""
    function = SUITE_TESTS[name]
    contracts = [m.args[0] for m in getattr(function, "pytestmark", []) if m.name == "contract"]
    assert len(contracts) == 1, f"{name} has contract markers {contracts}"
    assert CONTRACT_ID.match(contracts[0]), contracts[0]
    assert contracts[0].split(".")[0] == name.split(".")[2], (name, contracts[0])
    assert function.__doc__ and len(function.__doc__.split()) >= 5, f"{name} states no rule"
