"""The tier policy: which evidence puts a platform in which support tier.

Tiers are data, in a TOML file kept in the repository (``policy.toml`` beside this
module is the kit's own), never written by hand onto a platform. The file lists tiers
from the lowest up, each with the rules a platform must keep to hold it; a platform
holds a tier when it keeps that tier's rules and every lower tier's. Each rule has an
``id`` the fleet's ``promote_when`` and the docs refer to, a ``kind`` (``rules.KINDS``
says what each checks) and that kind's parameters. A policy has a ``version``: change
it with any rule, so a computed tier says which policy made it.

Every mistake in a policy file is one ``PolicyError`` line naming the file and the
key, never a traceback.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from conformance.results.signing import CI, SELF_REPORTED, UNCHECKED, VENDOR

#: Who may vouch for a record, as the policy names it (results.signing's levels).
TRUST_LEVELS = (VENDOR, CI, SELF_REPORTED, UNCHECKED)
_TRUST_WORDS = {CI: "CI-built", VENDOR: "vendor-signed", SELF_REPORTED: "self-reported",
                UNCHECKED: "signed (key unchecked)"}

#: Each rule kind's parameters: name -> (type, required). Every kind also takes
#: ``trust``: the levels of the records it looks at (default: all).
PARAMETERS: dict[str, dict[str, tuple[type, bool]]] = {
    "records": {"count": (int, True)},
    "conformant_streak": {"count": (int, True)},
    "fresh": {"max_age_days": (int, True)},
    "waivers": {"max_waived": (int, True)},
    "suites": {"required": (list, True)},
    "device_types": {"any_of": (list, True)},
}


#: Tier names and rule ids: what fleet files and commands name, so plain words only.
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}(\.[a-z][a-z0-9_]{0,39}){0,3}")


class PolicyError(Exception):
    """The policy file cannot be used; the message names the file and the key."""


@dataclasses.dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    about: str
    trust: tuple[str, ...]  # the trust levels of the records the rule looks at
    parameters: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Tier:
    name: str
    about: str
    rules: tuple[Rule, ...]


@dataclasses.dataclass(frozen=True)
class ReleaseGate:
    """``conformance release-check``: platforms at ``blocking_tier`` or above must be
    CONFORMANT on the candidate kit by a record at most ``max_age_days`` old."""

    blocking_tier: str
    max_age_days: int
    trust: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Policy:
    version: str
    source: str
    tiers: tuple[Tier, ...]
    release: ReleaseGate

    def tier_names(self) -> list[str]:
        return [tier.name for tier in self.tiers]

    def rank(self, tier: str | None) -> int:
        """0 for no tier, then 1, 2, ... from the lowest tier up."""
        return 0 if tier is None else self.tier_names().index(tier) + 1

    def promotion(self, reference: str) -> str:
        """What a fleet's ``promote_when`` names, in words: a tier (every rule up to
        it) or one rule. ``PolicyError`` when it names neither."""
        for index, tier in enumerate(self.tiers):
            if reference == tier.name:
                rules = [rule for lower in self.tiers[:index + 1] for rule in lower.rules]
                return f"tier {tier.name}: " + "; ".join(rule.about for rule in rules)
        for tier in self.tiers:
            for rule in tier.rules:
                if reference == rule.id:
                    return f"rule {rule.id}: {rule.about}"
        names = [tier.name for tier in self.tiers] + [rule.id for tier in self.tiers for rule in tier.rules]
        raise PolicyError(f"{reference!a} is neither a tier nor a rule of the tier policy {self.source} "
                          f"(one of: {', '.join(names)})")

    def rule(self, rule_id: str) -> Rule:
        for tier in self.tiers:
            for rule in tier.rules:
                if rule.id == rule_id:
                    return rule
        raise PolicyError(f"{self.source}: no rule with id {rule_id!r}")


def trust_words(levels: tuple[str, ...]) -> str:
    """Records of these trust levels, as sentences name them: "CI-built or vendor-signed"."""
    return " or ".join(_TRUST_WORDS[level] for level in levels)


def default_policy_path() -> Path:
    return Path(str(resources.files("conformance.tiers") / "policy.toml"))


def load_policy(path: str | Path | None = None) -> Policy:
    """The policy in ``path`` (the kit's own ``policy.toml`` when None)."""
    path = Path(path) if path is not None else default_policy_path()
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"{path}: not TOML: {exc}") from None
    return parse_policy(document, str(path))


def parse_policy(document: dict, source: str) -> Policy:
    _only(document, {"version", "tiers", "release"}, source)
    version = _text(document, "version", source)
    tiers = document.get("tiers")
    if not isinstance(tiers, list) or not tiers:
        raise PolicyError(f"{source}: 'tiers' must be a non-empty array of tables ([[tiers]])")
    parsed = tuple(_tier(tier, f"{source}: tiers[{i}]") for i, tier in enumerate(tiers))
    names = [tier.name for tier in parsed]
    ids = [rule.id for tier in parsed for rule in tier.rules]
    for label, values in (("tier name", names), ("rule id", ids)):
        repeated = sorted({value for value in values if values.count(value) > 1})
        if repeated:
            raise PolicyError(f"{source}: {label} {repeated[0]!r} is used more than once")
    release = _release(document.get("release"), f"{source}: release", names)
    return Policy(version, source, parsed, release)


def _tier(table: object, where: str) -> Tier:
    if not isinstance(table, dict):
        raise PolicyError(f"{where}: must be a table")
    _only(table, {"name", "about", "rules"}, where)
    rules = table.get("rules", [])
    if not isinstance(rules, list):
        raise PolicyError(f"{where}: 'rules' must be an array of tables ([[tiers.rules]])")
    name = _name(table, "name", where)
    return Tier(name, _text(table, "about", where),
                tuple(_rule(rule, f"{where} ({name}): rules[{i}]") for i, rule in enumerate(rules)))


def _rule(table: object, where: str) -> Rule:
    if not isinstance(table, dict):
        raise PolicyError(f"{where}: must be a table")
    kind = _text(table, "kind", where)
    if kind not in PARAMETERS:
        raise PolicyError(f"{where}: unknown kind {kind!r} (known: {', '.join(PARAMETERS)})")
    expected = PARAMETERS[kind]
    _only(table, {"id", "kind", "about", "trust", *expected}, where)
    parameters = {}
    for name, (kind_of, required) in expected.items():
        if name not in table:
            if required:
                raise PolicyError(f"{where}: a {kind!r} rule needs {name!r}")
            continue
        value = table[name]
        if not isinstance(value, kind_of) or isinstance(value, bool):
            raise PolicyError(f"{where}: {name!r} must be {'an integer' if kind_of is int else 'an array'}")
        if kind_of is int and value < 0:
            raise PolicyError(f"{where}: {name!r} must be >= 0, not {value}")
        if kind_of is list and not all(isinstance(item, str) and item for item in value):
            raise PolicyError(f"{where}: {name!r} must list non-empty strings")
        parameters[name] = tuple(value) if kind_of is list else value
    return Rule(_name(table, "id", where), kind, _text(table, "about", where),
                _trust(table, where), parameters)


def _release(table: object, where: str, tiers: list[str]) -> ReleaseGate:
    if not isinstance(table, dict):
        raise PolicyError(f"{where}: the policy needs a [release] table")
    _only(table, {"blocking_tier", "max_age_days", "trust"}, where)
    blocking = _text(table, "blocking_tier", where)
    if blocking not in tiers:
        raise PolicyError(f"{where}: blocking_tier {blocking!r} is not a tier ({', '.join(tiers)})")
    age = table.get("max_age_days")
    if not isinstance(age, int) or isinstance(age, bool) or age < 0:
        raise PolicyError(f"{where}: 'max_age_days' must be an integer >= 0")
    return ReleaseGate(blocking, age, _trust(table, where))


def _trust(table: dict, where: str) -> tuple[str, ...]:
    trust = table.get("trust", list(TRUST_LEVELS))
    if not isinstance(trust, list) or not trust or not all(level in TRUST_LEVELS for level in trust):
        raise PolicyError(f"{where}: 'trust' must list some of {', '.join(TRUST_LEVELS)}")
    return tuple(trust)


def _text(table: dict, key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise PolicyError(f"{where}: {key!r} must be a non-empty string")
    return value


def _name(table: dict, key: str, where: str) -> str:
    value = _text(table, key, where)
    if not _NAME.fullmatch(value):
        raise PolicyError(f"{where}: {key} {value!a} must be lower-case words joined by dots "
                          "(letters, digits, underscores)")
    return value


def _only(table: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise PolicyError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
