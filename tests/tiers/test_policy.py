"""The tier policy file: the kit's own loads, and every mistake is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.tiers import PolicyError, load_policy
from conformance.tiers.policy import PARAMETERS
from conformance.tiers.rules import KINDS

GOOD = '''
version = "7"
[[tiers]]
name = "low"
about = "a"
[[tiers.rules]]
id = "low.one"
kind = "records"
count = 1
about = "b"
[release]
blocking_tier = "low"
max_age_days = 3
'''


def test_the_kits_policy_has_three_tiers_with_an_official_gate():
    """Rule: the shipped policy orders experimental < supported < official and gates
    releases on official."""
    policy = load_policy()
    assert policy.tier_names() == ["experimental", "supported", "official"]
    assert policy.release.blocking_tier == "official"
    assert policy.rule("official.nightly_streak").parameters == {"count": 10}
    assert policy.rule("official.nightly_streak").trust == ("ci",)


def test_every_rule_kind_has_a_check_and_parameters():
    """Rule: the loader and the checks know the same kinds."""
    assert set(KINDS) == set(PARAMETERS)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace('kind = "records"', 'kind = "vibes"'), "rules[0]: unknown kind 'vibes'"),
    (lambda t: t.replace("count = 1", ""), "a 'records' rule needs 'count'"),
    (lambda t: t.replace("count = 1", 'count = "1"'), "'count' must be an integer"),
    (lambda t: t.replace("count = 1", "count = -1"), "'count' must be >= 0, not -1"),
    (lambda t: t.replace("count = 1", "count = 1\ncolour = 2"), "unknown key 'colour'"),
    (lambda t: t.replace('blocking_tier = "low"', 'blocking_tier = "gold"'), "blocking_tier 'gold' is not a tier"),
    (lambda t: t.replace("count = 1", 'count = 1\ntrust = ["friends"]'), "'trust' must list some of"),
    (lambda t: t.replace('version = "7"', ""), "'version' must be a non-empty string"),
    (lambda t: t + '[[tiers]]\nname = "low"\nabout = "again"\n', "tier name 'low' is used more than once"),
    (lambda t: t.replace("[release]", "[[tiers.rules]]\nid = \"low.one\"\nkind = \"records\"\ncount = 2\n"
                         "about = \"c\"\n[release]"), "rule id 'low.one' is used more than once"),
    (lambda t: t.replace("[release]\n", "[nope]\n"), "unknown key 'nope'"),
    (lambda t: t + "= broken", "not TOML"),
    (lambda t: t.replace('id = "low.one"', 'id = "low one; rm -rf"'), "id 'low one; rm -rf' must be lower-case"),
    (lambda t: t.replace('name = "low"', 'name = "Gold\\u202e"').replace('"low"', '"Gold\\u202e"'),
     "name 'Gold\\u202e' must be lower-case"),
])
def test_a_bad_policy_is_one_line_naming_the_key(tmp_path, edit, message):
    """Rule: a mistake in a policy file is a PolicyError naming the file and the key."""
    path = tmp_path / "policy.toml"
    path.write_text(edit(GOOD))
    with pytest.raises(PolicyError) as raised:
        load_policy(path)
    assert str(raised.value).startswith(str(path)) and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_good_policy_loads(tmp_path):
    """Rule: a rule without ``trust`` looks at records of every trust level."""
    path = tmp_path / "policy.toml"
    path.write_text(GOOD)
    assert load_policy(path).rule("low.one").trust == ("vendor", "ci", "self_reported", "unchecked")


def test_the_docs_name_every_rule_and_kind():
    """Rule: docs/tiers.md explains every rule id of the kit's policy and every kind."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "tiers.md").read_text(encoding="utf-8")
    policy = load_policy()
    missing = [rule.id for tier in policy.tiers for rule in tier.rules if f"`{rule.id}`" not in docs]
    missing += [kind for kind in KINDS if f"| `{kind}` |" not in docs]
    assert missing == []


def test_a_promotion_names_a_tier_or_a_rule():
    """Rule: a fleet's promote_when is a tier (all its rules and the lower tiers') or a
    rule id of the policy, given back in words; prose is refused listing the names."""
    policy = load_policy()
    assert policy.promotion("supported") == (
        "tier supported: at least one record this kit can judge; the newest 3 CI-built or "
        "vendor-signed records are all CONFORMANT; the newest CI-built or vendor-signed record is "
        "at most 30 days old; that record holds no expired waiver and waives at most 5 contracts")
    assert policy.promotion("official.fresh") == (
        "rule official.fresh: the newest CI-built record is at most 7 days old")
    with pytest.raises(PolicyError, match=r"'green on 10 nightly builds' is neither a tier nor a rule .* "
                                          r"\(one of: experimental, supported, official, experimental.has_record"):
        policy.promotion("green on 10 nightly builds")
