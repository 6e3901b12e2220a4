"""The collector's gate: is every required device's record there and conformant?

Soft-failing devices never fail the build, but they are listed in the same
annotation, with their verdict and, in the tier policy's words, the tier or rule that
will make them required, so a broken new backend is visible rather than silently green.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conformance.ci import markdown
from conformance.ci.layout import GATE_CONTEXT, verdict_key
from conformance.ci.publish import Publisher
from conformance.ci.verdicts import MISSING, DeviceVerdict, device_verdict
from conformance.tiers.policy import load_policy


@dataclasses.dataclass(frozen=True)
class GateEntry:
    device: str
    verdict: DeviceVerdict
    promote_when: str | None  # None: required
    conditional: bool = False  # its step has an `if`: no record may mean "skipped"

    @property
    def blocks(self) -> bool:
        if self.conditional and self.verdict.word == MISSING:
            return False
        return self.promote_when is None and not self.verdict.conformant

    @property
    def status(self) -> str:
        if self.promote_when is not None:
            return f"soft-fail until {load_policy().promotion(self.promote_when)}"
        return "required when run (its step has an if)" if self.conditional else "required"


def evaluate(results: Path, required: list[str], soft_fail: list[tuple[str, str]],
             conditional: list[str] = ()) -> list[GateEntry]:
    entries = [GateEntry(name, device_verdict(results, name), None) for name in required]
    entries += [GateEntry(name, device_verdict(results, name), None, conditional=True)
                for name in conditional]
    entries += [GateEntry(name, device_verdict(results, name), rule)
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
    rows = [[entry.device, entry.status, entry.verdict.word, entry.verdict.line]
            for entry in entries]
    return "\n".join([f"#### conformance gate {markdown.text(headline)}", "",
                      markdown.table(["device", "status", "verdict", "detail"], rows), ""])


def gate(results: Path, required: list[str], soft_fail: list[tuple[str, str]],
         publisher: Publisher, sharded: tuple[str, ...] = (),
         conditional: list[str] = ()) -> int:
    """Annotate the build with every device's verdict; 1 if a required one fails.
    The verdict words of ``sharded`` devices, whose jobs each saw one shard, are
    stored here, from their merged records."""
    entries = evaluate(results, required, soft_fail, conditional)
    for entry in entries:
        kind = "required" if entry.promote_when is None else "soft-fail"
        print(f"conformance gate: {entry.device} ({kind}): {entry.verdict.line}")
        if entry.device in sharded:
            publisher.set_metadata(verdict_key(entry.device), entry.verdict.word)
    publisher.annotate(render(entries), GATE_CONTEXT, style(entries))
    return 1 if any(entry.blocks for entry in entries) else 0
