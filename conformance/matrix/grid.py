"""The grid: one column per platform line, shown by its newest record, one cell per
contract.

A contract the record does not show running is ``not_run``, never a pass; a waiver
past its expiry is ``failed``, and says so; an incomplete record says how much of the
grid it covers; a column whose record is too old or of an older contract version says
when it was last verified, and on which kit; and every column says who vouches for it.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import re
from collections import Counter

from conformance.matrix import drilldown
from conformance.matrix.kits import version_key
from conformance.matrix.links import safe_link
from conformance.matrix.model import Cell, Column, Contract, SuiteCount, Waiver
from conformance.matrix.performance import performance_of
from conformance.matrix.sources import Accepted
from conformance.results import waivers
from conformance.results.outcomes import CELL_OUTCOMES, FAILING


@functools.cache
def column_id(distribution: str, plugin: str, device: str) -> str:
    """A slug for anchors and file names; the digest of the whole key keeps apart two
    lines whose names slug alike, or that differ only in their distribution. Cached:
    a build names each record's copy by it, tens of thousands of times."""
    slug = re.sub(r"[^a-z0-9]+", "-", f"{plugin} {device}".lower()).strip("-")[:40]
    digest = hashlib.sha256(f"{distribution}\0{plugin}\0{device}".encode()).hexdigest()[:8]
    return f"{slug or 'platform'}-{digest}"


def cell(contract: str, record: dict, tests: list[dict], regressed_since: str | None,
         flaky: bool, expired: dict[str, str] | None = None) -> Cell:
    """``expired``: the record's contracts whose waiver has expired, with its expiry."""
    entry = record["contracts"].get(contract)
    if entry is None:
        return Cell("not_run", "the record has no test of this contract", None)
    outcome = entry["outcome"]
    telling = next(t for t in tests if t["outcome"] == outcome)
    duration = sum(t["duration"] for t in tests)
    runs = drilldown.test_runs(tests)
    if outcome == "skipped":
        return Cell("not_run", drilldown.assertion(f"skipped: {telling['message']}"), duration, tests=runs)
    waiver = None
    if outcome == "waived":
        waived = waivers.parse_waived(telling["message"])
        waiver = (Waiver(waived.reason, safe_link(waived.link), waived.expires,
                         contract in (expired or {})) if waived
                  else Waiver(telling["message"], None))
        if waiver.expired:
            outcome = "failed"
    return Cell(outcome, drilldown.assertion(telling["message"]), duration, waiver,
                regressed_since, flaky, runs)


def staleness(record: Accepted, now: datetime.datetime, stale_days: int,
              contract_version: str) -> str | None:
    provenance = record.provenance
    too_old = now - record.started > datetime.timedelta(days=stale_days)
    older_contract = version_key(provenance["contract_version"]) < version_key(contract_version)
    if too_old or older_contract:
        return f"last verified {provenance['started_at'][:10]} on kit {provenance['kit_version']}"
    return None


def build_column(record: Accepted, contracts: list[Contract], record_href: str,
                 regressions: dict[str, str], flaky: list[str], stale: str | None,
                 now: datetime.datetime, unreleased: str | None = None) -> Column:
    data, provenance = record.data, record.provenance
    expired = waivers.expired_waivers(data, now)
    tests_by_contract: dict[str, list[dict]] = {}
    for test in data["tests"]:
        tests_by_contract.setdefault(test["contract"], []).append(test)
    flaky_set = set(flaky)
    cells = {c.id: cell(c.id, data, tests_by_contract.get(c.id, []), regressions.get(c.id),
                        c.id in flaky_set, expired)
             for c in contracts}
    counts = Counter(c.outcome for c in cells.values())
    ran = sum(1 for c in cells.values() if c.outcome != "not_run")
    plugin, host = provenance["plugin"], provenance["host"]
    device_type = str(provenance["device"]["type"])
    kind, note = device_kind(device_type, plugin.get("bridge"))
    return Column(
        id=column_id(*record.line),
        plugin=plugin["name"],
        distribution=plugin["distribution"],
        plugin_version=plugin["version"],
        bridged=_bridged(plugin.get("bridge"), provenance.get("mustpass_profile")),
        device=provenance["device"]["name"],
        device_type=device_type,
        device_kind=kind,
        device_note=note,
        kit_version=provenance["kit_version"],
        contract_version=provenance["contract_version"],
        date=provenance["started_at"],
        host=f"{host['hostname']} ({host['machine']}, {host['os']})",
        verdict=record.verdict,
        verdict_line=record.verdict_line,
        record=record_href,
        ci_build=safe_link((provenance.get("ci") or {}).get("build_url")),
        ci_job=ci_job_link(provenance.get("ci") or {}),
        trust=record.trust.level,
        trust_label=record.trust.label(),
        unreleased=unreleased,
        partial=None if data["complete"] else f"partial ({ran} of {len(contracts)} contracts)",
        stale=stale,
        counts={o: counts[o] for o in CELL_OUTCOMES if counts[o]},
        suites=suite_counts(contracts, cells),
        cells=cells,
        performance=performance_of(data),
    )


def ci_job_link(ci: dict) -> str | None:
    """Buildkite shows a job's log at its build's page with the job id as the fragment."""
    build, job = safe_link(ci.get("build_url")), ci.get("job_id")
    if build is None or not isinstance(job, str) or not re.fullmatch(r"[0-9a-fA-F-]{1,64}", job):
        return None
    return f"{build.split('#')[0]}#{job}"


def device_kind(device_type: str, bridge: dict | None) -> tuple[str, str]:
    """What computes the column's results, as a kind and in words: a plugin whose
    torch device type is ``cpu`` runs on the host's processor, so a record of an
    "NPU" plugin of that type is an emulation, not the hardware."""
    if bridge is not None:
        return "bridged", (f"another engine's plugin ({bridge['interface']} {bridge['version']}) "
                           f"run through the kit's bridge, on torch device type {device_type}")
    if device_type == "cpu":
        return "host_cpu", ("computes on the host CPU (torch device type cpu): "
                            "host-emulated unless the device is a CPU")
    return "device", f"computes on its device (torch device type {device_type})"


def suite_counts(contracts: list[Contract], cells: dict[str, Cell]) -> list[SuiteCount]:
    counts: dict[str, list[int]] = {}
    for contract in contracts:
        tally = counts.setdefault(contract.suite, [0, 0, 0])
        outcome = cells[contract.id].outcome
        tally[0 if outcome == "passed" else 1 if outcome in FAILING else 2] += 1
    return [SuiteCount(suite, passed, failing, other, passed + failing + other)
            for suite, (passed, failing, other) in counts.items()]


def _bridged(bridge: dict | None, profile: str | None) -> str | None:
    if bridge is None:
        return None
    judged = f", judged by the {profile} mustpass profile" if profile else ""
    return f"bridged from {bridge['interface']} {bridge['version']}{judged}"


def contract_rows(mustpass: dict[str, str], named: set[str]) -> list[Contract]:
    """The grid's rows: the mustpass contracts in their order, then contracts that only
    records name (``named``: other kits' or optional ones), each group ordered by suite."""
    extra = sorted(named - set(mustpass))
    rows = [Contract(c, c.split(".")[0], rule, True) for c, rule in mustpass.items()]
    rows += [Contract(c, c.split(".")[0], "not in this kit's mustpass list", False) for c in extra]
    suites = list(dict.fromkeys(r.suite for r in rows))
    return sorted(rows, key=lambda r: suites.index(r.suite))
