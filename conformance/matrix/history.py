"""A platform line's history: its runs, what changed between them, regressions, flakes.

Only records of the newest record's contract version are compared ("like with like",
as wpt.fyi's aligned runs): a contract's rule may differ between contract versions,
so older records are listed but never diffed. A record that did not run a contract
(absent, or skipped) is no data for it and is stepped over, never read as a change.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conformance.matrix.links import safe_link
from conformance.matrix.model import History, Run, Transition
from conformance.matrix.sources import Accepted
from conformance.results.outcomes import FAILING
from conformance.tiers.evidence import engine_of


def outcome_of(record: Accepted, contract: str) -> str | None:
    """The contract's outcome in the record, or None when the record shows no run of it."""
    entry = record.data["contracts"].get(contract)
    return None if entry is None or entry["outcome"] == "skipped" else entry["outcome"]


def compared(records: list[Accepted]) -> list[Accepted]:
    """The records (oldest first) of the newest record's contract version."""
    version = records[-1].provenance["contract_version"]
    return [r for r in records if r.provenance["contract_version"] == version]


def _sequence(records: list[Accepted], contract: str) -> list[tuple[Accepted, str]]:
    return [(r, o) for r in records if (o := outcome_of(r, contract)) is not None]


#: A record and a contract -> the line that says why it ended as it did there.
MessageOf = Callable[[Accepted, str], str]


def transitions(records: list[Accepted], contracts: list[str], href: dict[Path, str],
                message_of: MessageOf) -> list[Transition]:
    """Every change of a contract's outcome between consecutive records, newest first."""
    changes = []
    for contract in contracts:
        sequence = _sequence(records, contract)
        for (_, before), (record, after) in zip(sequence, sequence[1:]):
            if before != after:
                message = "" if after == "passed" else message_of(record, contract)
                changes.append(Transition(contract, before, after, record.provenance["started_at"],
                                          href[record.path], message))
    return sorted(changes, key=lambda t: (t.date, t.contract), reverse=True)


def flaky(records: list[Accepted], contracts: list[str]) -> list[str]:
    """Contracts that went both from passed to failing and from failing to passed."""
    found = []
    for contract in contracts:
        kinds = [_kind(o) for _, o in _sequence(records, contract)]
        steps = set(zip(kinds, kinds[1:]))
        if ("pass", "fail") in steps and ("fail", "pass") in steps:
            found.append(contract)
    return found


def regressions(records: list[Accepted]) -> dict[str, str]:
    """Contracts failing in the newest record that passed in the one before it, with
    that earlier record's date."""
    if len(records) < 2:
        return {}
    before, now = records[-2], records[-1]
    return {contract: before.provenance["started_at"]
            for contract in now.data["contracts"]
            if outcome_of(now, contract) in FAILING and outcome_of(before, contract) == "passed"}


def _kind(outcome: str) -> str:
    return "pass" if outcome == "passed" else "fail" if outcome in FAILING else "other"


def build_history(column: str, records: list[Accepted], contracts: list[str],
                  href: dict[Path, str], window: int, message_of: MessageOf) -> History:
    """``records`` oldest first; transitions and flakes over the last ``window``
    records of the newest record's contract version."""
    diffed = compared(records)[-window:]
    diffed_paths = {r.path for r in diffed}
    runs = [Run(id=r.digest[:12], date=r.provenance["started_at"],
                plugin_version=r.provenance["plugin"]["version"], engine=engine_of(r.provenance),
                kit_version=r.provenance["kit_version"],
                contract_version=r.provenance["contract_version"], verdict=r.verdict,
                trust=r.trust.label(),
                counts=dict(r.data["summary"]), record=href[r.path],
                ci_build=safe_link((r.provenance.get("ci") or {}).get("build_url")),
                compared=r.path in diffed_paths)
            for r in reversed(records)]
    _, plugin, device = records[-1].line
    return History(column, plugin, device, runs, transitions(diffed, contracts, href, message_of),
                   flaky(diffed, contracts))
