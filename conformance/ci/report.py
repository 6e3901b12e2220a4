"""A device step's report: its verdict as an annotation and as build meta-data.

Run in the device job after ``conformance run``, whatever that exited with, so a
failed or crashed run is as visible as a passing one.
"""

from __future__ import annotations

from pathlib import Path

from conformance.ci import markdown
from conformance.ci.layout import annotation_context, shard_context, verdict_key
from conformance.ci.publish import Publisher
from conformance.ci.verdicts import DeviceVerdict, judge
from conformance.results.sharding import ShardError, shard_in_command_line

#: Contracts listed by name in a summary; the rest are counted (the record has all).
LISTED_CONTRACTS = 25


def _provenance_lines(record: dict) -> list[str]:
    provenance = record["provenance"]
    plugin, device = provenance["plugin"], provenance["device"]
    return [
        f"Plugin {markdown.text(plugin['name'])} ({markdown.text(plugin['distribution'])} "
        f"{markdown.text(plugin['version'])}) on {markdown.text(device['name'])}, "
        f"kit {markdown.text(provenance['kit_version'])}, contract "
        f"{markdown.text(provenance['contract_version'])}",
    ]


def _record_tables(record: dict, verdict: DeviceVerdict) -> list[str]:
    counts = [[outcome, number] for outcome, number in record["summary"].items()]
    lines = ["", markdown.table(["outcome", "tests"], counts)]
    failing = verdict.contracts_not_passed()
    if failing:
        lines += ["", f"Contracts not passed ({len(failing)}):", ""]
        lines += [f"- {markdown.text(contract)}: {markdown.text(outcome)}"
                  for contract, outcome in failing[:LISTED_CONTRACTS]]
        if len(failing) > LISTED_CONTRACTS:
            lines.append(f"- and {len(failing) - LISTED_CONTRACTS} more (see the record)")
    return lines


def render_summary(device_name: str, record_path: Path, verdict: DeviceVerdict,
                   exit_status: int | None) -> str:
    """The Markdown summary of one device's run."""
    lines = [f"#### conformance: {markdown.text(device_name)}: "
             f"{markdown.text(verdict.word.upper())}", "", markdown.text(verdict.line)]
    if verdict.record is not None:
        lines += ["", *_provenance_lines(verdict.record), *_record_tables(verdict.record, verdict)]
    details = [f"record: {markdown.artifact_link(str(record_path))}"]
    if exit_status is not None:
        details.append(f"conformance run exit status {exit_status}")
    lines += ["", " · ".join(details), ""]
    return "\n".join(lines)


def _shard(verdict: DeviceVerdict) -> tuple[int, int] | None:
    if verdict.record is None:
        return None
    try:
        return shard_in_command_line(verdict.record["provenance"]["command_line"])
    except ShardError:
        return None


def shard_verdict(verdict: DeviceVerdict, shard: tuple[int, int]) -> DeviceVerdict:
    """A shard's own record never holds every contract, so ``conformance verify``
    calls it NOT CONFORMANT; what it can say is whether its own tests passed. The
    device's verdict is the collector's, on the merged record."""
    failing = verdict.contracts_not_passed()
    word = "shard-failed" if failing else "shard-passed"
    if not verdict.record["complete"]:
        word = "shard-incomplete"
    summary = ", ".join(f"{n} {o}" for o, n in verdict.record["summary"].items())
    line = (f"{word.upper()}: shard {shard[0]}/{shard[1]}: {summary or 'no tests'}; the "
            "device's verdict is the collector's, on the merged record")
    return DeviceVerdict(word, line, verdict.record)


def report(record_path: Path, device_name: str, exit_status: int | None,
           publisher: Publisher) -> DeviceVerdict:
    """Show the device's summary on the build and store its verdict word; a shard
    of a sharded run shows its own summary and stores no verdict."""
    verdict = judge(record_path)
    shard = _shard(verdict)
    context = annotation_context(device_name)
    if shard is not None:
        verdict = shard_verdict(verdict, shard)
        context = shard_context(device_name, shard[0])
    print(f"conformance: {device_name}: {verdict.line}")
    style = {"shard-passed": "info", "shard-incomplete": "warning"}.get(verdict.word,
                                                                         verdict.style)
    publisher.annotate(render_summary(device_name, record_path, verdict, exit_status),
                       context, style)
    if shard is None:
        publisher.set_metadata(verdict_key(device_name), verdict.word)
    return verdict
