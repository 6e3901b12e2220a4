"""Each platform line's support tier, for the overview's tier column: the kit's tier
policy (``conformance/tiers/policy.toml``) over the line's records as the index holds
them. ``conformance tiers`` gives the same answer with every rule's explanation."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from conformance.matrix.index import RecordIndex
from conformance.matrix.kits import KnownKits
from conformance.matrix.model import Column, OverviewCell
from conformance.matrix.sources import Accepted
from conformance.results.verify import ALLOWED
from conformance.results.waivers import expired_expiry
from conformance.tiers import TierResult, compute_tiers, load_policy
from conformance.tiers.evidence import JUDGED, NOT_CHECKED, facts_of, judged_by_release, release_verdict

#: What the overview says of the tier column, under the table.
EXPLANATION = ("the support tier the kit's tier policy gives the line's records (conformance tiers "
               "explains each rule); the second line says what the next tier still needs")


def line_tiers(records: list[Accepted], index: RecordIndex, kits: KnownKits,
               now: datetime.datetime) -> Callable[[Column], OverviewCell]:
    """The tier cell of each column, from every accepted record and the index holding
    their outcomes. A record of an earlier release counts with the verdict that release
    gives it, as in ``conformance tiers``. The rules read outcomes and waivers of a
    platform's newest judged record only, so only those are loaded: an earlier
    release's verdict on the rest is counted in SQL, and a record waiving one of its
    release's contracts is read whole, to tell an expired waiver."""
    policy = load_policy()
    verdicts: dict[str, str] = {}
    loaded: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {}
    by_release: dict[object, list[Accepted]] = {}
    for record in records:
        release = kits.release_of(record.provenance)
        if record.verdict == NOT_CHECKED and release is not None:
            by_release.setdefault(release, []).append(record)
        else:
            verdicts[record.digest] = record.verdict
    for release, judged in by_release.items():
        contracts = list(release.contracts)
        kept = index.keeping([r.digest for r in judged], contracts, sorted(set(ALLOWED) - {"waived"}))
        for record in judged:
            if record.digest in kept:
                verdicts[record.digest] = release_verdict(record.provenance, record.data["complete"], True)
            else:  # a waived contract, whose waiver may have expired, or one not kept
                loaded[record.digest] = _facts(record, index.outcomes([record.digest])[record.digest], index, now)
                verdicts[record.digest] = judged_by_release(record.provenance, record.data["complete"],
                                                            *loaded[record.digest], contracts)
    newest: dict[tuple, Accepted] = {}
    for record in records:
        place = (record.line, record.trust.level)
        if verdicts[record.digest] in JUDGED and (place not in newest or record.started > newest[place].started):
            newest[place] = record
    # Read in one query: there is a newest record per platform line, hundreds of them.
    unread = [record for record in newest.values() if record.digest not in loaded]
    outcomes = index.outcomes([record.digest for record in unread])
    for record in unread:
        loaded[record.digest] = _facts(record, outcomes[record.digest], index, now)
    evidence = [facts_of(str(record.path), record.provenance, *loaded.get(record.digest, ({}, ())),
                         verdicts[record.digest], record.trust.level, record.started)
                for record in records]
    results = {(key.distribution, key.plugin, key.device): result
               for key, result in compute_tiers(evidence, policy, now).items()}

    def cell(column: Column) -> OverviewCell:
        result = results.get((column.distribution, column.plugin, column.device))
        return _cell(result, policy.rank(result.tier) if result else 0)

    return cell


def _facts(record: Accepted, outcomes: dict[str, str], index: RecordIndex,
           now: datetime.datetime) -> tuple[dict[str, str], tuple[str, ...]]:
    """A record's contract ``outcomes`` and the contracts with a waived test whose
    waiver has expired (``waivers.expired_waivers``' rule, over the index's messages)."""
    if "waived" not in outcomes.values():
        return outcomes, ()
    kit = record.provenance["kit_version"]
    expired = tuple(sorted({contract for contract, outcome, message in index.not_passed([record.digest])[record.digest]
                            if outcome == "waived" and outcomes.get(contract) == "waived"
                            and expired_expiry(message, now.date(), kit)}))
    return outcomes, expired


def _cell(result: TierResult | None, rank: int) -> OverviewCell:
    if result is None:
        return OverviewCell("no tier", rank, "no record the policy reads")
    name = result.tier or "no tier"
    if result.next_tier is None:
        detail = "the top tier"
    else:
        # "for supported: fresh, waivers": the rules' names without the tier they are
        # named under ("supported.fresh"), which the cell has just named.
        missing = (check.rule.removeprefix(f"{result.next_tier}.") for check in result.missing)
        detail = f"for {result.next_tier}: {', '.join(missing)}"
    return OverviewCell(name, rank, detail, f"tier-{result.tier or 'none'}")
