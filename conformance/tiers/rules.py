"""What each kind of policy rule checks, over one platform's records.

A rule looks only at the records this kit judged (``Evidence.judged``) that are
vouched for as its ``trust`` says, newest first, and answers with a ``RuleCheck``:
whether it holds, one sentence why, and the records that sentence rests on.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable

from conformance.tiers.evidence import CONFORMANT, Evidence
from conformance.tiers.policy import TRUST_LEVELS, Rule, trust_words


@dataclasses.dataclass(frozen=True)
class RuleCheck:
    tier: str
    rule: str  # the rule's id
    holds: bool
    because: str
    records: tuple[str, ...] = ()  # refs of the records the sentence rests on


Check = Callable[[Rule, list[Evidence], datetime.datetime], tuple[bool, str, list[Evidence]]]


def check(tier: str, rule: Rule, records: list[Evidence], now: datetime.datetime) -> RuleCheck:
    """``rule`` over one platform's records (any order, any verdict)."""
    looked_at = sorted((r for r in records if r.judged and r.trust in rule.trust),
                       key=lambda r: r.started, reverse=True)
    holds, because, used = KINDS[rule.kind](rule, looked_at, now)
    return RuleCheck(tier, rule.id, holds, because, tuple(r.ref for r in used))


def _whose(rule: Rule) -> str:
    """The records a rule looks at, as its sentences name them ("" for all)."""
    if set(rule.trust) >= set(TRUST_LEVELS):
        return ""
    return trust_words(rule.trust) + " "


def _days(count: int) -> str:
    return f"{count} day" if count == 1 else f"{count} days"


def _records(rule: Rule, newest_first: list[Evidence], now) -> tuple[bool, str, list[Evidence]]:
    count = rule.parameters["count"]
    found = len(newest_first)
    noun = "record" if found == 1 else "records"
    return found >= count, f"{found} judged {_whose(rule)}{noun}, {count} needed", newest_first[:count]


def _conformant_streak(rule: Rule, newest_first: list[Evidence], now) -> tuple[bool, str, list[Evidence]]:
    count = rule.parameters["count"]
    streak = next((i for i, r in enumerate(newest_first) if r.verdict != CONFORMANT), len(newest_first))
    if streak >= count:
        return True, f"the newest {count} {_whose(rule)}records are CONFORMANT", newest_first[:count]
    if not newest_first:
        return False, f"no {_whose(rule)}record; {count} CONFORMANT in a row needed", []
    if streak < len(newest_first):
        return (False, f"{streak} CONFORMANT {_whose(rule)}records in a row, {count} needed: "
                       f"broken by {newest_first[streak].describe()}", newest_first[:streak + 1])
    return (False, f"{streak} CONFORMANT {_whose(rule)}records in a row, {count} needed: "
                   "there are no more", newest_first)


def _fresh(rule: Rule, newest_first: list[Evidence], now: datetime.datetime) -> tuple[bool, str, list[Evidence]]:
    limit = rule.parameters["max_age_days"]
    if not newest_first:
        return False, f"no {_whose(rule)}record, so none at most {_days(limit)} old", []
    newest = newest_first[0]
    age = (now - newest.started).days
    verb = "is" if age <= limit else "is stale:"
    return age <= limit, f"the newest {_whose(rule)}record {verb} {_days(age)} old (limit {limit})", [newest]


def _waivers(rule: Rule, newest_first: list[Evidence], now) -> tuple[bool, str, list[Evidence]]:
    limit = rule.parameters["max_waived"]
    if not newest_first:
        return False, f"no {_whose(rule)}record to look at", []
    newest = newest_first[0]
    if newest.expired_waivers:
        return (False, f"the newest {_whose(rule)}record holds expired waivers: "
                       f"{', '.join(newest.expired_waivers)}", [newest])
    waived = newest.waived
    listed = f" ({', '.join(waived)})" if waived else ""
    return (len(waived) <= limit,
            f"the newest {_whose(rule)}record waives {len(waived)} contracts{listed}, at most {limit} allowed",
            [newest])


def _suites(rule: Rule, newest_first: list[Evidence], now) -> tuple[bool, str, list[Evidence]]:
    required = rule.parameters["required"]
    if not newest_first:
        return False, f"no {_whose(rule)}record to look at", []
    newest = newest_first[0]
    passed = {contract.split(".", 1)[0] for contract, outcome in newest.outcomes.items() if outcome == "passed"}
    missing = [suite for suite in required if suite not in passed]
    if missing:
        return (False, f"the newest {_whose(rule)}record passed no contract of the suites "
                       f"{', '.join(missing)}", [newest])
    return True, f"the newest {_whose(rule)}record passed contracts of every required suite", [newest]


def _device_types(rule: Rule, newest_first: list[Evidence], now) -> tuple[bool, str, list[Evidence]]:
    allowed = rule.parameters["any_of"]
    if not newest_first:
        return False, f"no {_whose(rule)}record to look at", []
    newest = newest_first[0]
    verb = "is one of" if newest.device_type in allowed else "is not one of"
    return (newest.device_type in allowed,
            f"the newest record's device type {newest.device_type!r} {verb} {', '.join(allowed)}", [newest])


#: Each rule kind's check (policy.PARAMETERS lists each kind's parameters).
KINDS: dict[str, Check] = {
    "records": _records,
    "conformant_streak": _conformant_streak,
    "fresh": _fresh,
    "waivers": _waivers,
    "suites": _suites,
    "device_types": _device_types,
}
