"""The release gate: may kit VERSION be released, or does a platform block it?

A platform blocks the candidate when it stood at the policy's blocking tier (or above)
going into the candidate and is not CONFORMANT on it by a fresh record. "Going into"
matters: the candidate's own records must not decide who is held to it, or a platform
whose first candidate run fails would lose its tier and stop blocking. So the standing
is computed from the records of other kits made before the candidate's first record
(anyone's; now, if it has none), on that clock; then the candidate's newest record of
the trust the gate accepts is judged. Platforms below the blocking tier are listed,
never blocking.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable

from conformance.tiers.compute import compute_tiers
from conformance.tiers.evidence import CONFORMANT, Evidence, PlatformKey
from conformance.tiers.policy import Policy, trust_words


@dataclasses.dataclass(frozen=True)
class GateEntry:
    key: PlatformKey
    standing: str | None  # its tier going into the candidate
    held_to: bool  # at the blocking tier or above: it must be CONFORMANT on the candidate
    because: str  # what its candidate record says, or what is wrong with it
    conformant: bool  # CONFORMANT on the candidate by a fresh record
    record: str | None = None  # the candidate record judged, if any

    @property
    def blocks(self) -> bool:
        return self.held_to and not self.conformant


@dataclasses.dataclass(frozen=True)
class GateResult:
    kit_version: str
    policy_version: str
    blocking_tier: str
    entries: tuple[GateEntry, ...]

    @property
    def blockers(self) -> tuple[GateEntry, ...]:
        return tuple(entry for entry in self.entries if entry.blocks)


def release_check(records: Iterable[Evidence], kit_version: str, policy: Policy,
                  now: datetime.datetime) -> GateResult:
    records = list(records)
    candidate = [r for r in records if r.kit_version == kit_version]
    as_of = min((r.started for r in candidate), default=now)
    before = [r for r in records if r.kit_version != kit_version and r.started <= as_of]
    standing = compute_tiers(before, policy, as_of)
    gate = policy.release
    entries = []
    for key in sorted({r.key for r in records}):
        tier = standing[key].tier if key in standing else None
        held_to = policy.rank(tier) >= policy.rank(gate.blocking_tier)
        theirs = sorted((r for r in candidate if r.key == key and r.judged and r.trust in gate.trust),
                        key=lambda r: r.started, reverse=True)
        problem = _problem(theirs, kit_version, gate.max_age_days, now, gate.trust)
        because = problem or f"CONFORMANT on kit {kit_version}: {theirs[0].describe()}"
        entries.append(GateEntry(key, tier, held_to, because, problem is None,
                                 theirs[0].ref if theirs else None))
    return GateResult(kit_version, policy.version, gate.blocking_tier, tuple(entries))


def _problem(newest_first: list[Evidence], kit_version: str, max_age_days: int,
             now: datetime.datetime, trust: tuple[str, ...]) -> str | None:
    if not newest_first:
        return f"no judged {trust_words(trust)} record of kit {kit_version}"
    newest = newest_first[0]
    if newest.verdict != CONFORMANT:
        return f"its newest record of kit {kit_version} is {newest.verdict}: {newest.describe()}"
    age = (now - newest.started).days
    if age > max_age_days:
        return (f"its newest record of kit {kit_version} is {age} days old, over the "
                f"{max_age_days}-day limit: {newest.describe()}")
    return None
