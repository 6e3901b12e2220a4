"""Every test of the kit's suites says which contract it checks and how, and the
shipped mustpass list is the one the contract and the suites generate."""

from __future__ import annotations

import json

import pytest

from conformance.pytest_plugin.collection import CONTRACT_ID
from conformance.suites import registry

SUITE_TESTS = {f"{module}.{name}": function
               for module, name, function in registry.suite_test_functions()}


def test_suites_have_tests():
    """The suites are not empty."""
    assert len(SUITE_TESTS) > 40


@pytest.mark.parametrize("name", sorted(SUITE_TESTS))
def test_suite_test_names_its_contract_and_rule(name):
    """Each suite test carries one contract id of the form suite.area.name, whose
    suite is the suite it lives in, and a docstring saying how it checks the rule."""
    function = SUITE_TESTS[name]
    contracts = [m.args[0] for m in getattr(function, "pytestmark", []) if m.name == "contract"]
    assert len(contracts) == 1, f"{name} has contract markers {contracts}"
    assert CONTRACT_ID.match(contracts[0]), contracts[0]
    assert contracts[0].split(".")[0] == name.split(".")[2], (name, contracts[0])
    assert len(registry.test_description(function).split()) >= 5, f"{name} describes nothing"


def test_shipped_mustpass_is_current():
    """``results/mustpass.json`` lists exactly the contracts and rules the suites
    define (regenerate with ``python -m conformance.dev regenerate``)."""
    shipped = json.loads(registry.MUSTPASS_PATH.read_text())
    assert shipped == registry.mustpass()


def test_contract_of_nodeid_matches_markers():
    """A node id alone (as a crashed worker's report has) leads to its contract."""
    assert registry.contract_of_nodeid(
        "communicator/test_gather.py::test_gather_reaches_dst_only[world2]"
    ) == "communicator.gather.dst_only"
    assert registry.contract_of_nodeid("vendor_tests/test_mine.py::test_x") is None


#: Contracts no broken plugin can break on a machine without an accelerator: CPU
#: torch has no lazily initialised device runtime for discovery to touch.
UNBREAKABLE_HERE = {"platform.discovery.no_device_init"}


def test_every_contract_has_a_broken_plugin():
    """The kit proves it can fail: every required contract is broken by at least one
    plugin in ``tests/plugins`` whose run must fail it."""
    from plugins import catalogue

    caught = set().union(*(expected for _, _, expected in catalogue.BROKEN.values()))
    caught |= {contract for _, contract, _ in catalogue.MISBEHAVING_COMMUNICATORS.values()}
    caught |= {contract for _, contract in catalogue.ISOLATED.values()}
    caught |= {contract for _, contract, _ in catalogue.REFUSED.values()}
    assert set(registry.contracts()) - caught == UNBREAKABLE_HERE
