"""Tiers and the release gate in words: the lines ``conformance tiers`` and
``conformance release-check`` print, and the JSON they write with ``--json``.

Names and paths come from records, so every line goes through
``reading.printable``: a record's text can neither break a line nor reorder it.
"""

from __future__ import annotations

import dataclasses

from tabulate import tabulate

from conformance.results.reading import printable
from conformance.tiers.compatibility import Combination
from conformance.tiers.compute import TierResult
from conformance.tiers.release_gate import GateResult


def tier_lines(result: TierResult) -> list[str]:
    tier = result.tier or "no tier"
    upward = f"; next: {result.next_tier}" if result.next_tier else "; the top tier"
    lines = [f"{result.key}: {tier} (policy {result.policy_version}){upward}"]
    for check in result.checks:
        mark = "holds" if check.holds else "FAILS"
        lines.append(f"  [{mark}] {check.rule}: {check.because}")
        if check.records:
            lines.append(f"          {_records(check.records)}")
    if result.next_tier:
        needed = ", ".join(check.rule for check in result.missing)
        lines.append(f"  needed for {result.next_tier}: {needed}")
    if result.not_judged:
        lines.append(f"  not judged by this kit, counted by no rule: {', '.join(result.not_judged)}")
    return [printable(line) for line in lines]


def _records(refs: tuple[str, ...]) -> str:
    """The records a check rests on, newest first; a long run by its ends."""
    if len(refs) <= 3:
        return f"records: {', '.join(refs)}"
    return f"records: {refs[0]} ... {refs[-1]} ({len(refs)})"


def gate_lines(gate: GateResult) -> list[str]:
    blockers = gate.blockers
    if blockers:
        head = (f"release-check: kit {gate.kit_version} is BLOCKED by {len(blockers)} platform(s) at "
                f"{gate.blocking_tier} or above (policy {gate.policy_version}): "
                f"{'; '.join(str(entry.key) for entry in blockers)}")
    else:
        head = (f"release-check: kit {gate.kit_version} may be released: every platform at "
                f"{gate.blocking_tier} or above is CONFORMANT on it (policy {gate.policy_version})")
    lines = [head]
    for entry in gate.entries:
        word = "BLOCKS" if entry.blocks else "ok" if entry.conformant else "not blocking"
        lines.append(f"  [{word}] {entry.key} ({entry.standing or 'no tier'} going in): {entry.because}")
    return [printable(line) for line in lines]


def compatibility_lines(table: dict) -> list[str]:
    """One table per platform: plugin version x engine and kit, with the newest verdict."""
    lines = []
    for key, combinations in table.items():
        rows = [[c.plugin_version, c.engine, c.kit_version, c.contract_version, c.verdict, c.runs, c.newest]
                for c in combinations]
        lines += [f"{key}:", *tabulate(rows, headers=["plugin", "engine", "kit", "contract", "verdict",
                                                      "runs", "newest record"],
                                      disable_numparse=True).splitlines(), ""]
    return [printable(line) for line in lines]


def compatibility_json(table: dict[object, list[Combination]]) -> list[dict]:
    return [{"key": dataclasses.asdict(key), "combinations": [dataclasses.asdict(c) for c in combinations]}
            for key, combinations in table.items()]


def tiers_json(results: dict) -> list[dict]:
    return [{**dataclasses.asdict(result), "missing": [dataclasses.asdict(c) for c in result.missing]}
            for result in results.values()]


def gate_json(gate: GateResult) -> dict:
    return {**dataclasses.asdict(gate), "blocked": [str(entry.key) for entry in gate.blockers]}
