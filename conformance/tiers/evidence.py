"""What a tier is computed from: each record a reader has already checked, reduced to
the facts the rules look at.

The caller reads and checks records (the matrix's reader, ``conformance.matrix.sources``,
does for ``conformance tiers``) and hands over each with its verdict and who vouches
for it; nothing here reads files or trusts a record it was not given. A record of an
earlier kit release is one this kit's verifier does not judge (its suites are not the
installed ones), so ``judge_by_release`` judges it by that release's contract list:
complete, and every contract of the release present with an outcome a conformant
record may hold. A record judged by a mustpass profile (a bridged plugin's) names a
list only its own kit ships, so it stays unjudged.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Mapping

from conformance.results import waivers
from conformance.results.timestamps import parse_timestamp
from conformance.results.verify import ALLOWED
from conformance.tiers.policy import trust_words

CONFORMANT, NOT_CONFORMANT, INCOMPLETE = "CONFORMANT", "NOT CONFORMANT", "INCOMPLETE"
#: The verdict of a record no verifier at hand judges: it counts toward no rule.
NOT_CHECKED = "NOT CHECKED"
JUDGED = (CONFORMANT, NOT_CONFORMANT, INCOMPLETE)


@dataclasses.dataclass(frozen=True, order=True)
class PlatformKey:
    """A platform line, as the matrix keys its columns."""

    distribution: str
    plugin: str
    device: str

    def __str__(self) -> str:
        return f"{self.plugin} on {self.device} [{self.distribution}]"


@dataclasses.dataclass(frozen=True)
class Evidence:
    key: PlatformKey
    ref: str  # where the record is: its path, or a link
    started: datetime.datetime
    kit_version: str
    contract_version: str
    plugin_version: str
    engine: str  # the engine it ran on: "vllm 0.32.1" through a bridge, else the kit's own
    device_type: str
    verdict: str  # one of JUDGED, or NOT_CHECKED
    trust: str  # a results.signing trust level
    outcomes: Mapping[str, str]  # contract id -> its outcome
    expired_waivers: tuple[str, ...] = ()

    @property
    def judged(self) -> bool:
        return self.verdict in JUDGED

    @property
    def waived(self) -> list[str]:
        return [contract for contract, outcome in self.outcomes.items() if outcome == "waived"]

    def describe(self) -> str:
        """The record in a few words, as explanations name it."""
        return (f"{self.ref} ({self.started:%Y-%m-%d}, kit {self.kit_version}, {self.verdict}, "
                f"{trust_words((self.trust,))})")


def evidence_of(ref: str, record: dict, verdict: str, trust: str, now: datetime.datetime) -> Evidence:
    """The facts of a checked, schema-valid ``record`` that the tier rules read."""
    return facts_of(ref, record["provenance"], {c: e["outcome"] for c, e in record["contracts"].items()},
                    tuple(sorted(waivers.expired_waivers(record, now))), verdict, trust,
                    parse_timestamp(record["provenance"]["started_at"]))


def engine_of(provenance: dict) -> str:
    """The engine a record ran on: the bridged engine at its installed version
    ("vllm 0.32.1") for a plugin run through a bridge, else the kit's own reference
    engine ("conformance 0.1.0"). The tiers' compatibility and the matrix's name it so."""
    bridge = provenance["plugin"].get("bridge")
    return f"{bridge['interface']} {bridge['version']}" if bridge else f"conformance {provenance['kit_version']}"


def facts_of(ref: str, provenance: dict, outcomes: dict[str, str], expired_waivers: tuple[str, ...],
             verdict: str, trust: str, started: datetime.datetime) -> Evidence:
    """``evidence_of`` from a record's parts, for a reader (the matrix's index) that
    keeps a record's outcomes apart from its provenance and has parsed its start time
    (``started``) already."""
    plugin = provenance["plugin"]
    return Evidence(
        key=PlatformKey(plugin["distribution"], plugin["name"], provenance["device"]["name"]),
        ref=ref, started=started,
        kit_version=provenance["kit_version"], contract_version=provenance["contract_version"],
        plugin_version=plugin["version"], engine=engine_of(provenance), device_type=provenance["device"]["type"],
        verdict=verdict, trust=trust, outcomes=outcomes, expired_waivers=expired_waivers)


def judge_by_release(record: dict, contracts: Iterable[str], now: datetime.datetime) -> str:
    """The verdict on a checked record of an earlier release whose contract ids are
    ``contracts``: what that release's verifier says of a record its suites made."""
    return judged_by_release(record["provenance"], record["complete"],
                             {c: e["outcome"] for c, e in record["contracts"].items()},
                             waivers.expired_waivers(record, now), contracts)


def judged_by_release(provenance: dict, complete: bool, outcomes: dict[str, str],
                      expired_waivers: Iterable[str], contracts: Iterable[str]) -> str:
    """``judge_by_release`` from a record's parts (see ``facts_of``)."""
    expired = set(expired_waivers)
    return release_verdict(provenance, complete, all(
        outcomes.get(contract) in ALLOWED and contract not in expired for contract in contracts))


def release_verdict(provenance: dict, complete: bool, kept: bool) -> str:
    """An earlier release's verdict on its record, given whether the record kept every
    one of that release's contracts (``ALLOWED``, no expired waiver)."""
    if provenance.get("mustpass_profile") is not None:
        return NOT_CHECKED
    if not complete:
        return INCOMPLETE
    return CONFORMANT if kept else NOT_CONFORMANT
