"""A device step's report: its verdict as an annotation and as build meta-data.

Run in the device job after ``conformance run``, whatever that exited with, so a
failed or crashed run is as visible as a passing one.
"""

from __future__ import annotations

from pathlib import Path

from conformance.ci import agent, markdown
from conformance.ci.layout import annotation_context, verdict_key
from conformance.ci.verdicts import DeviceVerdict, judge

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


def report(record_path: Path, device_name: str, exit_status: int | None) -> DeviceVerdict:
    """Annotate the build with the device's summary and store its verdict word."""
    verdict = judge(record_path)
    print(f"conformance: {device_name}: {verdict.line}")
    agent.annotate(render_summary(device_name, record_path, verdict, exit_status),
                   annotation_context(device_name), verdict.style)
    agent.set_metadata(verdict_key(device_name), verdict.word)
    return verdict
