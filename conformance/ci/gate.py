"""The collector's gate: is every required device's record there and conformant?

Soft-failing devices never fail the build, but they are listed in the same
annotation, with their verdict and the rule that will make them required, so a
broken new backend is visible rather than silently green.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conformance.ci import agent, markdown
from conformance.ci.layout import GATE_CONTEXT
from conformance.ci.verdicts import DeviceVerdict, device_record, judge


@dataclasses.dataclass(frozen=True)
class GateEntry:
    device: str
    verdict: DeviceVerdict
    promote_when: str | None  # None: required

    @property
    def blocks(self) -> bool:
        return self.promote_when is None and not self.verdict.conformant


def evaluate(results: Path, required: list[str],
             soft_fail: list[tuple[str, str]]) -> list[GateEntry]:
    entries = [GateEntry(name, judge(device_record(results, name)), None) for name in required]
    entries += [GateEntry(name, judge(device_record(results, name)), rule)
                for name, rule in soft_fail]
    return entries


def style(entries: list[GateEntry]) -> str:
    if any(entry.blocks for entry in entries):
        return "error"
    if any(not entry.verdict.conformant for entry in entries):
        return "warning"
    return "success"


def render(entries: list[GateEntry]) -> str:
    blocking = [entry.device for entry in entries if entry.blocks]
    soft = [e.device for e in entries if e.promote_when is not None and not e.verdict.conformant]
    if blocking:
        headline = f"failed: {', '.join(blocking)} required but not conformant"
    else:
        headline = "passed: every required device is conformant"
    if soft:
        headline += f"; soft-failing, not counted: {', '.join(soft)}"
    rows = [[entry.device,
             "required" if entry.promote_when is None
             else f"soft-fail until: {entry.promote_when}",
             entry.verdict.word, entry.verdict.line]
            for entry in entries]
    return "\n".join([f"#### conformance gate {markdown.text(headline)}", "",
                      markdown.table(["device", "status", "verdict", "detail"], rows), ""])


def gate(results: Path, required: list[str], soft_fail: list[tuple[str, str]]) -> int:
    """Annotate the build with every device's verdict; 1 if a required one fails."""
    entries = evaluate(results, required, soft_fail)
    for entry in entries:
        kind = "required" if entry.promote_when is None else "soft-fail"
        print(f"conformance gate: {entry.device} ({kind}): {entry.verdict.line}")
    agent.annotate(render(entries), GATE_CONTEXT, style(entries))
    return 1 if any(entry.blocks for entry in entries) else 0
