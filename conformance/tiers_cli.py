"""The ``conformance tiers``, ``conformance release-check`` and ``conformance drift``
commands.

They sit here, above the harness, because they read records exactly as the support
matrix does (``conformance.matrix.sources``: the same checks, keyrings and known kit
releases), so a tier rests on the records the page shows; the ``conformance.tiers``
package they call sits below the matrix, which shows tiers.

- ``conformance tiers RECORDS...``: each platform's tier, why, and what it needs next
  (``--compatibility``: its plugin versions by engine and kit release; ``--fleet``:
  which soft-failing devices have reached their ``promote_when``);
- ``conformance release-check --kit VERSION RECORDS...``: exit 1 naming the platforms
  that block the release of the installed kit, the candidate;
- ``conformance drift --from A [--to B]``: what changed in the plugin contract
  (``--vllm``: in vLLM's plugin interface, between two vLLM releases).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from conformance.ci.fleet import Fleet, load_fleet
from conformance.ci.names import FleetError
from conformance.results.reading import printable
from conformance.results.timestamps import BadTimestamp, parse_timestamp
from conformance.tiers import drift, report
from conformance.tiers.compatibility import compatibility
from conformance.tiers.compute import compute_tiers
from conformance.tiers.evidence import NOT_CHECKED, Evidence, evidence_of, judge_by_release
from conformance.tiers.policy import Policy, PolicyError, load_policy
from conformance.tiers.promotion import promotions
from conformance.tiers.release_gate import GateResult, release_check
from conformance.tiers.vllm_interface import load_vllm_snapshot

COMMANDS = ("tiers", "release-check", "drift")


def add_parsers(commands: argparse._SubParsersAction) -> None:
    tiers = commands.add_parser(
        "tiers", help="compute each platform's support tier from result records",
        description="Each platform's tier by the tier policy (docs/tiers.md): every rule "
        "that holds or fails with the records it rests on, and what the next tier needs.")
    release = commands.add_parser(
        "release-check", help="exit 1 if a platform at the policy's blocking tier is not "
        "CONFORMANT on the release candidate",
        description="The release gate: every platform that stood at the policy's blocking "
        "tier before the candidate must be CONFORMANT on it by a fresh record. Exit status: "
        "0 releasable, 1 blocked (naming the platforms and why), 2 bad input.")
    release.add_argument("--kit", required=True, metavar="VERSION",
                         help="the release candidate: the installed kit's version")
    release.add_argument("--markdown", type=Path, metavar="FILE",
                         help="also write the result as a Markdown annotation (a CI step's)")
    for parser in (tiers, release):
        parser.add_argument("records", nargs="+", metavar="RECORDS",
                            help="record files, or folders searched recursively for *.json")
        parser.add_argument("--policy", metavar="FILE", help="a tier policy (default: the kit's own)")
        parser.add_argument("--as-of", metavar="TIME",
                            help="judge on this RFC 3339 time instead of now (to reproduce a decision)")
        parser.add_argument("--json", action="store_true", help="print JSON instead of lines")
    tiers.add_argument("--allow-unreleased", action="store_true",
                       help="count records of the installed kit when it is not a release")
    tiers.add_argument("--fleet", type=Path, metavar="FILE",
                       help="instead of tiers, whether each soft-failing device of this fleet file "
                       "has reached its promote_when")
    tiers.add_argument("--check", action="store_true",
                       help="with --fleet: exit 1 when a soft-failing device is due for promotion, "
                       "so a scheduled CI step fails until the fleet file makes it required")
    tiers.add_argument("--compatibility", action="store_true",
                       help="instead of tiers, each platform's plugin versions by engine and kit "
                       "release, with the newest verdict of each combination")
    drift_parser = commands.add_parser(
        "drift", help="what changed in the plugin contract between two versions",
        description="Every name of the contract added, removed or changed (signature, "
        "decorators, default, rule paragraphs) and what a plugin must change. A version is "
        f"'current', a kit release whose snapshot the kit keeps ({', '.join(drift.kept_versions())}), "
        "or a snapshot file.")
    drift_parser.add_argument("--from", dest="before", required=True, metavar="A")
    drift_parser.add_argument("--to", dest="after", metavar="B",
                              help="default: 'current' (with --vllm: 'installed')")
    drift_parser.add_argument("--vllm", action="store_true",
                              help="compare vLLM's plugin interface (Platform, attention backend, "
                              "communicator, worker base) between two vLLM releases instead; each is "
                              "'installed', a vLLM wheel file or a folder holding the vllm package")


def run(args: argparse.Namespace) -> int:
    try:
        if args.command == "drift":
            return _drift(args)
        return _tiers(args) if args.command == "tiers" else _release_check(args)
    except (PolicyError, BadTimestamp, drift.DriftError, FleetError) as exc:
        print(f"conformance {args.command}: {exc}", file=sys.stderr)
        return 2


def _now(args: argparse.Namespace) -> datetime.datetime:
    if args.as_of is None:
        return datetime.datetime.now(datetime.timezone.utc)
    return parse_timestamp(args.as_of)


def _evidence(args: argparse.Namespace, now: datetime.datetime, allow_unreleased: bool) -> list[Evidence]:
    """The records the matrix would show, each with its verdict; the rest named on stderr."""
    # Imported here: every `conformance` command builds these parsers, and only these
    # two commands read records.
    from conformance.matrix.kits import known_kits
    from conformance.matrix.sources import load_records

    kits = known_kits()
    accepted, rejected = load_records(args.records, kits, now, allow_unreleased)
    for rejection in rejected:
        print(f"conformance {args.command}: not used {rejection.path}: {rejection.reason}", file=sys.stderr)
    evidence = []
    for record in accepted:
        verdict, release = record.verdict, kits.release_of(record.provenance)
        if verdict == NOT_CHECKED and release is not None:
            verdict = judge_by_release(record.data, release.contracts, now)
        evidence.append(evidence_of(str(record.path), record.data, verdict, record.trust.level, now))
    return evidence


def _tiers(args: argparse.Namespace) -> int:
    policy, now = load_policy(args.policy), _now(args)
    if args.check and not args.fleet:
        print("conformance tiers: --check needs --fleet FILE (it checks the fleet's soft-failing "
              "devices)", file=sys.stderr)
        return 2
    fleet = load_fleet(args.fleet) if args.fleet else None  # a bad one, before any work
    evidence = _evidence(args, now, args.allow_unreleased)
    if args.compatibility:
        table = compatibility(evidence)
        print(json.dumps(report.compatibility_json(table), indent=1) if args.json
              else "\n".join(report.compatibility_lines(table)))
        return 0
    results = compute_tiers(evidence, policy, now)
    if fleet is not None:
        due = _promotions(fleet, results, policy)
        if args.check and due:
            print(f"conformance tiers: due for promotion but still soft-failing: {', '.join(due)} "
                  f"(set soft_fail = false in {args.fleet})", file=sys.stderr)
            return 1
        return 0
    if args.json:
        print(json.dumps(report.tiers_json(results), indent=1))
    else:
        for result in results.values():
            print("\n".join(report.tier_lines(result)))
    return 0


def _promotions(fleet: Fleet, results: dict, policy: Policy) -> list[str]:
    """Print each soft-failing device's promotion; the names of those that are due."""
    soft = [(d.name, d.platform, d.promote_when) for d in fleet.active() if d.soft_fail]
    due = []
    for promotion in promotions(soft, results, policy):
        verdict = "due: make it required" if promotion.due else "not yet"
        print(printable(f"{promotion.device} (soft-fail until {promotion.reference}): {promotion.platform}: "
                        f"{promotion.because}; {verdict}"))
        if promotion.due and promotion.device not in due:
            due.append(promotion.device)
    return [printable(name) for name in due]


def _release_check(args: argparse.Namespace) -> int:
    from conformance.matrix.kits import known_kits

    policy, now = load_policy(args.policy), _now(args)
    installed = known_kits().installed.version
    if args.kit != installed:
        print(f"conformance release-check: --kit {args.kit!a} is not the installed kit ({installed}): "
              "the candidate's records are judged by its own verifier, so install it", file=sys.stderr)
        return 2
    gate = release_check(_evidence(args, now, allow_unreleased=True), args.kit, policy, now)
    if args.json:
        print(json.dumps(report.gate_json(gate), indent=1))
    else:
        print("\n".join(report.gate_lines(gate)))
    if args.markdown:
        args.markdown.write_text(_gate_markdown(gate), encoding="utf-8")
    return 1 if gate.blockers else 0


def _gate_markdown(gate: GateResult) -> str:
    """The gate as a build annotation: its first line a heading, then a row per
    platform, every value escaped (names come from records)."""
    from conformance.ci import markdown

    head, *_ = report.gate_lines(gate)
    rows = [[str(entry.key), entry.standing or "no tier",
             "blocks" if entry.blocks else "ok" if entry.conformant else "not blocking", entry.because]
            for entry in gate.entries]
    return "\n".join([f"#### {markdown.text(head)}", "",
                      markdown.table(["platform", "tier going in", "status", "why"], rows), ""])


def _drift(args: argparse.Namespace) -> int:
    if args.vllm:
        before, after = load_vllm_snapshot(args.before), load_vllm_snapshot(args.after or "installed")
        lines = drift.render(before, after, subject="vLLM plugin interface")
    else:
        before, after = drift.load_snapshot(args.before), drift.load_snapshot(args.after or "current")
        lines = drift.render(before, after)
    print("\n".join(printable(line) for line in lines))
    return 0
