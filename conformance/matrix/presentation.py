"""How statuses read to a person, shared by the HTML and Markdown outputs.

Every status has a glyph and a word, so it reads without colour (colour is only a
second channel, added by the stylesheet); ``SEVERITY`` orders cells for sorting,
worst first.
"""

from __future__ import annotations

import re

from conformance.results import outcomes

GLYPHS = {str(outcome): glyph for outcome, glyph in outcomes.GLYPHS.items()}

WORDS = {outcome: outcome.replace("_", " ") for outcome in GLYPHS}

SEVERITY = {outcome: rank for rank, outcome in enumerate(outcomes.SEVERITY)}

CAPABILITY_GLYPHS = {"verified": "✔", "failing": "✘", "waived": "◐", "unverified": "∅", "not_declared": "·"}
CAPABILITY_WORDS = {"verified": "declared and verified", "failing": "declared but failing",
                    "waived": "declared, waived", "unverified": "declared, not verified",
                    "not_declared": "not declared"}
#: What each state means and what its count counts, for the pages' explanations.
CAPABILITY_EXPLANATIONS = {
    "verified": "every contract that computed with the value passed in a complete record; "
                "the count is of those contracts",
    "failing": "a contract that computed with the value failed, errored, crashed, timed out or refused "
               "it as not supported; the contracts are named",
    "waived": "no contract that computed with the value failed, but one is waived by the plugin's "
              "expectations file: known not to work, with a reason and a link",
    "unverified": "declared, but no test computed with it, the record lists no coverage, the run did "
                  "not finish, or its contracts were skipped",
    "not_declared": "the plugin does not declare the value",
}


def status(outcome: str) -> str:
    return f"{GLYPHS[outcome]} {WORDS[outcome]}"


def verdict_class(verdict: str) -> str:
    """The CSS class of a cell showing ``verdict``: "verdict-not-conformant"."""
    return "verdict-" + verdict.lower().replace(" ", "-")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def day(timestamp: str) -> str:
    return timestamp[:10]


def figure(value: float) -> str:
    """Three or so significant digits: the runs behind a figure vary more than that."""
    return f"{value:,.2f}" if value < 10 else f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


def sort_value(value: str | float) -> str:
    """An overview cell's sort value as its page writes it: text as it is, a number to
    seven significant digits (a suite's share 56/60 as 0.9333333, not
    0.9333333333333333), which keeps apart any two shares of suites of up to 3,000
    contracts and makes the overview of 500 platforms 22 KB smaller."""
    return value if isinstance(value, str) else f"{value:.7g}"


def plural(count: int, noun: str) -> str:
    """"1 record", "2 records": the pages count things people read."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def natural_key(text: str) -> list:
    """Sorts "vendor2" before "vendor10": digit runs compare as numbers, the rest
    case-insensitively (the page's script sorts the same way, with Intl.Collator)."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part.casefold())
            for part in re.split(r"(\d+)", text) if part]
