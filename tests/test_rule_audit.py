"""The rule audit: every method of the plugin contract is checked by some contract, and
every rule the contract states names the contract whose tests check it."""

from __future__ import annotations

import inspect

import pytest

from conformance.contract import rules
from conformance.contract.attention import AttentionBackend, AttentionImpl
from conformance.contract.communicator import DeviceCommunicatorBase
from conformance.contract.platform import Platform
from conformance.contract.worker import WorkerBase
from conformance.suites import registry, rule_map

INTERFACES = (Platform, AttentionBackend, AttentionImpl, WorkerBase, DeviceCommunicatorBase)


def _methods() -> dict[str, str]:
    """``Class.method`` -> docstring, for every public method of the interfaces."""
    return {f"{cls.__name__}.{name}": inspect.getdoc(getattr(cls, name)) or ""
            for cls in INTERFACES for name, value in vars(cls).items()
            if not name.startswith("_")
            and (inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod)))}


def test_every_method_is_audited():
    """Rule: each interface method is mapped to the contracts that check it, or named
    unobservable with a reason; the map names no method the contract lacks."""
    methods = set(_methods())
    audited = set(rule_map.CHECKED_BY) | set(rule_map.UNOBSERVABLE)
    assert methods - audited == set(), "methods no contract checks"
    assert audited - methods == set(), "audited names that are not methods of the contract"


@pytest.mark.parametrize("method", sorted(rule_map.UNOBSERVABLE))
def test_a_stated_rule_is_never_unobservable(method):
    """Rule: a method whose docstring states a rule needs a contract that checks it."""
    assert "Rule" not in _methods()[method], f"{method} states a rule but is called unobservable"


def test_audit_names_real_contracts():
    """Rule: every contract the audit names exists in the suites."""
    known = set(registry.contracts())
    named = {c for ids in rule_map.CHECKED_BY.values() for c in ids}
    assert named - known == set()
    assert all(rule_map.CHECKED_BY.values())


def test_every_contract_has_a_stated_rule():
    """Rule: each contract the suites test is stated as a rule in the contract's
    docstrings, and each stated rule names a contract the suites test: the mustpass
    list quotes the contract, never the tests."""
    stated = {rule.contract for rule in rules.rules()}
    tested = set(registry.contracts())
    assert tested - stated == set(), "contracts tested but stated nowhere in the contract"
    assert stated - tested == set(), "rules naming a contract no test checks"


def test_no_rule_is_stated_without_its_contract():
    """Rule: every paragraph of the contract that states a rule names the contract
    whose tests check it (``Rule ``id``: ...``)."""
    assert rules.unlabelled() == []


def test_the_audit_sees_an_unlabelled_rule(monkeypatch):
    """The audit above can fail: a bare "Rule:" paragraph is reported, a labelled one
    is read as a rule of its contract."""
    docstring = ("Does a thing.\n\nRule: the thing is done.\n\n"
                 "Rule ``platform.runtime.seeding``: the same seed\n    reproduces.")
    monkeypatch.setattr(rules, "_documented", lambda: iter([("Demo.method", docstring)]))
    rules.rules.cache_clear()
    try:
        assert rules.unlabelled() == [("Demo.method", "Rule: the thing is done.")]
        assert rules.rules() == (rules.Rule("platform.runtime.seeding", "the same seed reproduces.",
                                            "Demo.method"),)
    finally:
        rules.rules.cache_clear()
