"""The family audit: every member of a family of the contract is checked for every
property its family shares (``conformance/suites/families.py``), its rule states the
property in the family's words, and the tests named for it exist and check that rule."""

from __future__ import annotations

import inspect

import pytest

from conformance.contract import custom_ops
from conformance.contract.communicator import DeviceCommunicatorBase
from conformance.contract.rules import rule_texts
from conformance.suites import families, registry

MEMBER_PROPERTIES = [(family, member, prop)
                     for family, spec in families.FAMILIES.items()
                     for member in spec.members for prop in spec.properties]


@pytest.mark.parametrize(("family", "member", "prop"), MEMBER_PROPERTIES,
                         ids=[f"{f}-{m}-{p}" for f, m, p in MEMBER_PROPERTIES])
def test_every_member_is_checked_for_every_property(family, member, prop):
    """Rule: each member of a family has a check of each property of its family; its
    contract's rule states the property in the family's words; and each test named
    for it exists in the suites and carries that contract."""
    check = families.CHECKS.get((family, member), {}).get(prop)
    assert check is not None, f"{family} member {member} lacks a check of {prop!r}"
    words = families.FAMILIES[family].properties[prop]
    assert words in rule_texts().get(check.contract, ""), (
        f"the rule of {check.contract} does not state {prop!r} in the family's words: {words!r}")
    assert check.tests, f"{family} member {member}: no test named for {prop!r}"
    for test in check.tests:
        assert registry.contract_of_nodeid(test) == check.contract, (
            f"{test} is not a test of {check.contract}")


def test_checks_name_only_members_and_properties():
    """Rule: the checks table names no member or property its family lacks."""
    for (family, member), checks in families.CHECKS.items():
        spec = families.FAMILIES[family]
        assert member in spec.members, f"{member} is no member of {family}"
        assert set(checks) <= set(spec.properties), f"{family} has no property {set(checks) - set(spec.properties)}"


def test_a_property_is_shared_or_said_not_to_be():
    """Rule: a family never both shares a property and says it does not."""
    for name, spec in families.FAMILIES.items():
        assert not set(spec.properties) & set(spec.not_shared), name


def test_every_collective_and_op_is_a_member():
    """Rule: every collective of the communicator contract and every custom op is a
    member of its family, or named as not one with the reason: a new method joins the
    family's properties when it joins the contract."""
    collectives = families.FAMILIES["collectives"]
    named = {part for member in collectives.members for part in member.split("/")}
    methods = {name for name, value in vars(DeviceCommunicatorBase).items()
               if inspect.isfunction(value) and not name.startswith("_")}
    assert methods == named | set(collectives.not_members), methods ^ (named | set(collectives.not_members))
    assert set(families.FAMILIES["custom_ops"].members) == set(custom_ops.OPS)


def test_the_audit_sees_a_missing_check(monkeypatch):
    """The audit above can fail: a member whose check of a property is removed, or whose
    rule lacks the property's words, is reported."""
    checks = dict(families.CHECKS)
    all_gather = dict(checks[("collectives", "all_gather")])
    del all_gather["results_kept"]
    checks[("collectives", "all_gather")] = all_gather
    monkeypatch.setattr(families, "CHECKS", checks)
    with pytest.raises(AssertionError, match="all_gather lacks a check of 'results_kept'"):
        test_every_member_is_checked_for_every_property("collectives", "all_gather", "results_kept")
    words = {**families.FAMILIES["collectives"].properties, "exact": "bit for bit on a full moon"}
    monkeypatch.setitem(families.FAMILIES, "collectives",
                        families.Family(families.FAMILIES["collectives"].members, words))
    with pytest.raises(AssertionError, match="does not state 'exact'"):
        test_every_member_is_checked_for_every_property("collectives", "all_reduce", "exact")


def test_the_table_prints_every_member():
    """The Markdown table has a row per property and member, none without a check."""
    table = families.table()
    assert len(table.splitlines()) == 2 + len(MEMBER_PROPERTIES)
    assert "**none**" not in table
