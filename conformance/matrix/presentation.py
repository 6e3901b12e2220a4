"""How statuses read to a person, shared by the HTML and Markdown outputs.

Every status has a glyph and a word, so it reads without colour (colour is only a
second channel, added by the stylesheet); ``SEVERITY`` orders cells for sorting,
worst first.
"""

from __future__ import annotations

from conformance.results import outcomes

GLYPHS = {str(outcome): glyph for outcome, glyph in outcomes.GLYPHS.items()}

WORDS = {outcome: outcome.replace("_", " ") for outcome in GLYPHS}

SEVERITY = {outcome: rank for rank, outcome in enumerate(outcomes.SEVERITY)}

CAPABILITY_GLYPHS = {"verified": "✔", "failing": "✘", "unverified": "∅", "not_declared": "·"}
CAPABILITY_WORDS = {"verified": "declared and verified", "failing": "declared but failing",
                    "unverified": "declared, not verified", "not_declared": "not declared"}


def status(outcome: str) -> str:
    return f"{GLYPHS[outcome]} {WORDS[outcome]}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def day(timestamp: str) -> str:
    return timestamp[:10]


def figure(value: float) -> str:
    """Three or so significant digits: the runs behind a figure vary more than that."""
    return f"{value:,.2f}" if value < 10 else f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


def plural(count: int, noun: str) -> str:
    """"1 record", "2 records": the pages count things people read."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
