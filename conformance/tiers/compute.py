"""Each platform's tier, computed from its records by a policy.

A platform holds the highest tier whose rules it keeps together with every lower
tier's; the tier above that is its next, and the rules of it that fail are what it
needs. The result keeps every rule's check, so a page or a command can say why.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable

from conformance.tiers.evidence import Evidence, PlatformKey
from conformance.tiers.policy import Policy
from conformance.tiers.rules import RuleCheck, check


@dataclasses.dataclass(frozen=True)
class TierResult:
    key: PlatformKey
    tier: str | None  # None: not even the lowest tier
    policy_version: str
    checks: tuple[RuleCheck, ...]  # every rule of every tier, lowest tier first
    next_tier: str | None  # None: at the top
    records: tuple[str, ...]  # every record of the platform that was given, newest first
    not_judged: tuple[str, ...] = ()  # of those, the ones no rule could count

    @property
    def missing(self) -> tuple[RuleCheck, ...]:
        """The rules of the next tier that fail: what the platform needs to reach it."""
        return tuple(c for c in self.checks if c.tier == self.next_tier and not c.holds)

    def held(self, tier: str) -> tuple[RuleCheck, ...]:
        return tuple(c for c in self.checks if c.tier == tier)


def compute_tiers(records: Iterable[Evidence], policy: Policy,
                  now: datetime.datetime) -> dict[PlatformKey, TierResult]:
    """Every platform's tier on ``now``'s clock, keyed as the matrix keys columns."""
    by_platform: dict[PlatformKey, list[Evidence]] = {}
    for record in records:
        by_platform.setdefault(record.key, []).append(record)
    return {key: tier_of(key, by_platform[key], policy, now) for key in sorted(by_platform)}


def tier_of(key: PlatformKey, records: list[Evidence], policy: Policy, now: datetime.datetime) -> TierResult:
    checks = [check(tier.name, rule, records, now) for tier in policy.tiers for rule in tier.rules]
    held, next_tier = None, None
    for tier in policy.tiers:
        if all(c.holds for c in checks if c.tier == tier.name):
            held = tier.name
        else:
            next_tier = tier.name
            break
    newest_first = sorted(records, key=lambda r: r.started, reverse=True)
    return TierResult(key, held, policy.version, tuple(checks), next_tier,
                      tuple(r.ref for r in newest_first),
                      tuple(r.ref for r in newest_first if not r.judged))
