"""Checking a result record before anyone trusts it.

``verify_record`` answers with a one-line verdict and an exit code:

- 0 ``CONFORMANT``: a valid, complete record in which every required contract of
  the mustpass list ran once and passed, is waived or is declared not supported;
  a record that names a mustpass profile (``provenance.mustpass_profile``, a bridged
  plugin's: ``mustpass-PROFILE.json``) is judged on that profile's contracts, and
  its other contracts not passed are listed as the kit's stricter rules;
- 1 ``NOT CONFORMANT``: a valid, complete record in which some contract has another
  outcome, or some required contract never ran;
- 2 ``INVALID``: not JSON, not matching the schema, with a name that does not read as
  what it is (``identity``), a time that is not RFC 3339 with a zone, out of order or
  in the future (``timestamps``), made by other suites than the ones installed,
  naming contract ids this kit does not have, with roll-ups that do not match its
  tests, or with a signature that does not match its content or its keyring
  (``signing``);
- 3 ``INCOMPLETE``: valid, but from a run that never finished (killed or running).

A waiver past its expiry (``waivers``) counts as a failure. Every verdict line ends
with who vouches for the record: signed by a vendor, built by CI, or self-reported.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import json
from collections import Counter
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from conformance.contract.version import CONTRACT_VERSION
from conformance.results import identity, outcomes, reading, signing, timestamps, waivers
from conformance.results.provenance import suite_hash
from conformance.results.reading import load_schema as load_schema
from conformance.results.record import roll_up_contracts


class Status(enum.IntEnum):
    """A verdict, as the exit status of ``conformance verify``."""

    CONFORMANT = 0
    NOT_CONFORMANT = 1
    INVALID = 2
    INCOMPLETE = 3


CONFORMANT, NOT_CONFORMANT, INVALID, INCOMPLETE = Status


@dataclasses.dataclass(frozen=True)
class Verdict:
    exit_code: Status
    line: str
    problems: tuple[str, ...] = ()
    trust: signing.Trust | None = None  # None when the record is INVALID

    @property
    def valid(self) -> bool:
        return self.exit_code != INVALID


#: Contract outcomes a conformant record may hold (``skipped`` is not one: nothing
#: was shown).
ALLOWED = (outcomes.PASSED, outcomes.NOT_SUPPORTED, outcomes.WAIVED)


def profile_path(profile: str | None = None) -> Path:
    """The shipped mustpass list, or that of the mustpass profile ``profile``."""
    name = "mustpass.json" if profile is None else f"mustpass-{profile}.json"
    return Path(str(resources.files("conformance.results") / name))


def load_mustpass(profile: str | None = None) -> dict[str, str]:
    """Required contract ids of this kit release (of the mustpass profile
    ``profile``, when given), with their rules."""
    return dict(_mustpass(profile))


# Read once per process: the matrix verifies a thousand records in one.
@functools.cache
def _mustpass(profile: str | None) -> dict[str, str]:
    return json.loads(profile_path(profile).read_text())["contracts"]


@functools.cache
def _installed_suite_hash() -> str:
    return suite_hash()


def field_problems(record: object, now: datetime.datetime | None = None, raw: bytes | None = None) -> list[str]:
    """What makes a record unreadable to any kit: off the schema, names that do not
    read as what they are, bad times. One line each. ``raw``: as ``schema_problems``."""
    return reading.schema_problems(record, raw) or name_and_time_problems(record, now)


def name_and_time_problems(record: dict, now: datetime.datetime | None = None) -> list[str]:
    """``field_problems`` of a record already known to match the schema."""
    problems = identity.name_problems(record["provenance"])
    if signing.SIGNATURE_FIELD in record:
        signer = record[signing.SIGNATURE_FIELD]["signer"]
        if (problem := identity.name_problem(signer)) is not None:
            problems.append(f"signature/signer: {identity.shown(signer)} {problem}")
    return problems + timestamps.time_problems(record, now)


def unknown_contracts_problem(record: dict, known: set[str] | frozenset[str], kit: str) -> str | None:
    """The first contract id the record names that kit ``kit`` (whose ids are
    ``known``) does not have, and how many such ids it names."""
    named = [t["contract"] for t in record["tests"] if t["contract"] is not None]
    unknown = [c for c in dict.fromkeys([*named, *record["contracts"]]) if c not in known]
    if not unknown:
        return None
    return (f"names {len(unknown)} contract ids that kit {kit} does not have, the first "
            f"{unknown[0]!r}: a record may hold only its kit's contracts")


def _consistency_problems(record: dict, contracts: Iterable[str]) -> list[str]:
    problems = []
    provenance = record["provenance"]
    unknown = unknown_contracts_problem(record, frozenset(contracts), provenance["kit_version"])
    if unknown:
        return [unknown]  # the roll-up checks below would only repeat it
    profile = provenance.get("mustpass_profile")
    if profile is not None and not profile_path(profile).is_file():
        problems.append(f"names the mustpass profile {profile!r}, which this kit does not ship")
    if provenance["suite_hash"] != _installed_suite_hash():
        problems.append(
            "suite hash differs from the installed suites: the record was made by "
            f"another kit version or modified suites ({provenance['kit_version']})"
        )
    if provenance["contract_version"] != CONTRACT_VERSION:
        problems.append(
            f"contract version {provenance['contract_version']} is not the installed "
            f"{CONTRACT_VERSION}"
        )
    nodeids = [t["nodeid"] for t in record["tests"]]
    if len(set(nodeids)) < len(nodeids):  # a set is cheaper to make than a Counter
        duplicates = [n for n, c in Counter(nodeids).items() if c > 1]
        problems.append(f"tests recorded more than once: {', '.join(duplicates[:5])}")
    expected = roll_up_contracts(record["tests"])
    if record["contracts"] != expected:
        differing = sorted(c for c in expected.keys() | record["contracts"].keys()
                           if record["contracts"].get(c) != expected.get(c))
        problems.append(f"per-contract roll-up does not match the test entries for "
                        f"{_first(differing)}")
    if record["summary"] != outcomes.count(t["outcome"] for t in record["tests"]):
        problems.append("summary counts do not match the test entries")
    if record["complete"] and not record["tests"]:
        problems.append("the run recorded no test: a run that tests nothing proves nothing")
    return problems


@dataclasses.dataclass(frozen=True)
class Checking:
    """What a verifier checks a record against besides the installed kit: the clock
    (times may not lie ahead of it), the keyrings that say whose signature counts
    (none: a valid signature is reported, its key unchecked), and the contract ids
    the kit has (None: the installed mustpass list's; a benchmark describes others)."""

    now: datetime.datetime | None = None
    vendor_keyring: signing.Keyring | None = None
    ci_keyring: signing.Keyring | None = None
    contracts: frozenset[str] | None = None

    def clock(self) -> datetime.datetime:
        return self.now or datetime.datetime.now(datetime.timezone.utc)


def verify_record(path: str | Path, checking: Checking = Checking()) -> Verdict:
    """Check the record at ``path``; see the module docstring for the verdicts."""
    path = Path(path)
    try:
        raw, record = reading.read_record(path)
    except reading.UnreadableRecord as exc:
        return _invalid(path, [str(exc)])
    return verify_loaded(record, path, checking, raw)


def _invalid(path: str | Path, problems: list[str]) -> Verdict:
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    problems = [reading.printable(problem) for problem in problems]
    return Verdict(INVALID, reading.printable(f"INVALID: {path}: ") + f"{problems[0]}{more}",
                   tuple(problems))


def verify_loaded(record: object, path: str | Path, checking: Checking = Checking(),
                  raw: bytes | None = None) -> Verdict:
    """The verdict on ``record``, already read from ``path`` (which names it in the
    verdict line) by ``reading.read_record``, from ``raw`` when the caller has it."""
    problems = field_problems(record, checking.clock(), raw)
    if problems:
        return _invalid(path, problems)
    return verify_readable(record, path, checking)


def verify_readable(record: dict, path: str | Path, checking: Checking = Checking()) -> Verdict:
    """``verify_loaded`` of a record whose ``field_problems`` the caller found none of
    (the matrix checks those of every record before it asks which kit judges it: it
    would otherwise check each record twice)."""
    now = checking.clock()
    contracts = load_mustpass().keys() if checking.contracts is None else checking.contracts
    problems = _consistency_problems(record, contracts)
    if problems:
        return _invalid(path, problems)
    trust, problem = signing.check_signature(record, checking.vendor_keyring, checking.ci_keyring)
    if problem:
        return _invalid(path, [problem])
    verdict = _judge(record, path, now)
    return dataclasses.replace(verdict, line=reading.printable(f"{verdict.line}; {trust.describe()}"),
                               trust=trust)


def _judge(record: dict, path: str | Path, now: datetime.datetime) -> Verdict:
    """The verdict on a record with nothing invalid about it."""
    plugin = record["provenance"]["plugin"]
    who = f"{plugin['name']} [{plugin['distribution']} {plugin['version']}]"
    profile = record["provenance"].get("mustpass_profile")
    if profile is not None:
        who += f" under the {profile} mustpass profile"
    summary = ", ".join(f"{n} {o}" for o, n in record["summary"].items()) or "no tests"
    if not record["complete"]:
        return Verdict(
            INCOMPLETE,
            f"INCOMPLETE: {path} is a valid record of a run of {who} that did not "
            f"finish; {len(record['tests'])} tests recorded ({summary})",
        )
    contracts, required = _with_expired_waivers(record, now), load_mustpass(profile)
    not_passed = [c for c, r in contracts.items() if r["outcome"] not in ALLOWED]
    failing = [c for c in not_passed if profile is None or c in required]
    stricter = _stricter([c for c in not_passed if c not in failing], contracts)
    missing = [c for c in required if c not in contracts]
    if failing or missing:
        reasons = []
        if failing:
            reasons.append(f"{len(failing)} of {len(contracts)} contracts not passed "
                           f"({_first(failing, contracts)})")
        if missing:
            reasons.append(f"{len(missing)} required contracts never ran "
                           f"({_first(missing)}): a partial run proves only part")
        return Verdict(NOT_CONFORMANT,
                       f"NOT CONFORMANT: {who}: {'; '.join(reasons)}; tests: {summary}"
                       f"{stricter}{_unverified(record)}{_config_changes(record)}")
    return Verdict(
        CONFORMANT,
        f"CONFORMANT: {who} on {record['provenance']['device']['name']}: "
        f"{len(record['contracts'])} contracts; tests: {summary}{stricter}{_unverified(record)}"
        f"{_config_changes(record)}",
    )


def _with_expired_waivers(record: dict, now: datetime.datetime) -> dict:
    """The record's contract roll-ups, a waived contract whose waiver has expired
    counting as failing."""
    expired = waivers.expired_waivers(record, now)
    return {contract: ({**entry, "outcome": f"failed (waiver expired {expired[contract]})"}
                       if contract in expired else entry)
            for contract, entry in record["contracts"].items()}


def _stricter(ids: list[str], contracts: dict) -> str:
    """The contracts outside a profile that were not passed: shown, not counted."""
    if not ids:
        return ""
    return f"; the kit's stricter rules, outside the profile, not passed: {len(ids)} ({_first(ids, contracts)})"


def _unverified(record: dict) -> str:
    """Declared values no test exercised (computed with): claims the record cannot
    vouch for, even where a config hook accepted them."""
    checked = record.get("capability_config_checked", {})
    unexercised = [f"{dimension} {value}" + (" (config-checked only)" if checked.get(dimension, {}).get(value) else "")
                   for dimension, values in record.get("capability_coverage", {}).items()
                   for value, contracts in values.items() if not contracts]
    if not unexercised:
        return ""
    return f"; unverified (declared, exercised by no test): {_first(unexercised)}"


def _config_changes(record: dict) -> str:
    """What a bridged plugin's config hook changed of the kit's requests: the tests
    it failed say so one by one, the verdict says it once."""
    changes = record["provenance"]["plugin"].get("bridge", {}).get("config_changes", [])
    if not changes:
        return ""
    return f"; the plugin's config hook changes the kit's requests: {len(changes)} ({_first(changes, shown=3)})"


def _first(ids: list[str], contracts: dict | None = None, shown: int = 5) -> str:
    listed = [f"{c}: {contracts[c]['outcome']}" if contracts else c for c in ids[:shown]]
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(listed) + more
