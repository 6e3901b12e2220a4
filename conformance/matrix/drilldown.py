"""What a cell opens on: the contract's tests in the record, each as a vendor acts on it.

A suite's failure message often starts with context, on a line of its own ending in
a colon ("call 1 of 7 (3 requests, ...):", "batch ...:"), and states the failure on
the next; the cell shows that statement (``assertion``), and the drill-down the
whole message (bounded), the node id, the duration and, for a generated case, the
command or decorator that reruns it (``reproducer``).
"""

from __future__ import annotations

import re

from conformance.matrix.model import TestRun
from conformance.results.outcomes import FAILING

#: The most of a message a page shows; the record holds up to 4,000 characters.
MESSAGE_LIMIT = 2000
#: The suites print ``reproduce: COMMAND`` with a generated case; Hypothesis prints
#: ``@reproduce_failure(...)`` where its database cannot replay one.
_REPRODUCER = re.compile(r"^\s*(?:reproduce: (?P<command>\S.*)|(?P<decorator>@reproduce_failure\(.*\)))\s*$",
                         re.MULTILINE)
#: Lines that are not the failure itself: context that introduces it (ends in a
#: colon), a reproducer, or a Hypothesis heading.
_CONTEXT = re.compile(r":\s*$|^\s*(reproduce: |@reproduce_failure\(|Falsifying example)")


def assertion(message: str) -> str:
    """The first line of ``message`` that states what failed; its first line when every
    line is context, "" when it is empty."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    stated = next((line for line in lines if not _CONTEXT.search(line)), lines[0] if lines else "")
    return stated[:300]


def reproducer(message: str) -> str | None:
    match = _REPRODUCER.search(message)
    if match is None:
        return None
    return (match["command"] or match["decorator"]).strip()[:500]


def bounded(message: str) -> str:
    if len(message) <= MESSAGE_LIMIT:
        return message
    return f"{message[:MESSAGE_LIMIT]}\n… ({len(message) - MESSAGE_LIMIT:,} more characters in the record)"


def test_runs(tests: list[dict]) -> list[TestRun]:
    """The contract's tests, failing ones first (in the record's order otherwise)."""
    ordered = sorted(tests, key=lambda t: t["outcome"] not in FAILING)
    return [TestRun(nodeid=t["nodeid"], outcome=t["outcome"], duration=t["duration"],
                    assertion=assertion(t["message"]), message=bounded(t["message"]),
                    reproducer=reproducer(t["message"]))
            for t in ordered]
