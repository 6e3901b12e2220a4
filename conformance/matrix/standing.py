"""Each platform line's support tier, for the overview's tier column: the kit's tier
policy (``conformance/tiers/policy.toml``) over the line's records as the index holds
them. ``conformance tiers`` gives the same answer with every rule's explanation."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from conformance.matrix.kits import KnownKits
from conformance.matrix.model import Column, OverviewCell
from conformance.matrix.sources import Accepted
from conformance.results.waivers import has_expired, parse_waived
from conformance.tiers import TierResult, compute_tiers, load_policy
from conformance.tiers.evidence import NOT_CHECKED, facts_of, judged_by_release

#: What the overview says of the tier column, under the table.
EXPLANATION = ("the support tier the kit's tier policy gives the line's records (conformance tiers "
               "explains each rule); the second line says what the next tier still needs")


def line_tiers(records: list[Accepted], outcomes: dict[str, dict[str, str]],
               waived_message: Callable[[str, str], str], kits: KnownKits,
               now: datetime.datetime) -> Callable[[Column], OverviewCell]:
    """The tier cell of each column, from every accepted record, its contract outcomes
    (by digest) and the message of a record's waived contract (``waived_message(digest,
    contract)``, read only for waived ones, to tell an expired waiver). A record of an
    earlier release counts with the verdict that release gives it, as in
    ``conformance tiers``."""
    policy = load_policy()
    evidence = []
    for record in records:
        found = outcomes.get(record.digest, {})
        expired = tuple(sorted(
            contract for contract, outcome in found.items()
            if outcome == "waived" and _expired(waived_message(record.digest, contract), record, now)))
        verdict, release = record.verdict, kits.release_of(record.provenance)
        if verdict == NOT_CHECKED and release is not None:
            verdict = judged_by_release(record.provenance, record.data["complete"], found, expired,
                                        release.contracts)
        evidence.append(facts_of(str(record.path), record.provenance, found, expired,
                                 verdict, record.trust.level))
    results = {(key.distribution, key.plugin, key.device): result
               for key, result in compute_tiers(evidence, policy, now).items()}

    def cell(column: Column) -> OverviewCell:
        result = results.get((column.distribution, column.plugin, column.device))
        return _cell(result, policy.rank(result.tier) if result else 0)

    return cell


def _expired(message: str, record: Accepted, now: datetime.datetime) -> bool:
    waived = parse_waived(message)
    return bool(waived and waived.expires
                and has_expired(waived.expires, now.date(), record.provenance["kit_version"]))


def _cell(result: TierResult | None, rank: int) -> OverviewCell:
    if result is None:
        return OverviewCell("no tier", rank, "no record the policy reads")
    name = result.tier or "no tier"
    if result.next_tier is None:
        detail = "the top tier"
    else:
        detail = f"for {result.next_tier}: {', '.join(check.rule for check in result.missing)}"
    return OverviewCell(name, rank, detail, f"tier-{result.tier or 'none'}")
