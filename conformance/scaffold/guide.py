"""The sections of ``docs/plugin-guide.md`` made from the suites: one per suite, each
contract with its rule (the suites' markers and the contract's ``Rule`` paragraphs, as
``conformance contracts`` prints them). The rest of the guide is written by hand;
``python -m conformance.dev regenerate`` rewrites the generated part.
"""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugin-guide.md"
BEGIN, END = "<!-- generated from the suites: begin -->", "<!-- generated from the suites: end -->"


def suite_sections() -> str:
    """Markdown: a heading per suite, a table of its contracts, the contract version
    each was added in, and their rules."""
    from conformance.results.since import load_since
    from conformance.suites.registry import contracts

    since = load_since()
    by_suite: dict[str, list[tuple[str, str]]] = {}
    for contract, rule in contracts().items():
        by_suite.setdefault(contract.split(".")[0], []).append((contract, rule))
    parts = []
    for suite, rows in by_suite.items():
        table = "\n".join(f"| `{contract}` | {since.get(contract, '')} | {rule.replace('|', chr(92) + '|')} |"
                          for contract, rule in rows)
        parts.append(f"### The {suite} suite ({len(rows)} contracts)\n\n"
                     f"| contract | since | rule |\n|---|---|---|\n{table}\n")
    return "\n".join(parts)


def with_sections(guide: str) -> str:
    """``guide`` with the text between its markers replaced by ``suite_sections()``."""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(guide):
        raise ValueError(f"the guide has no {BEGIN} ... {END} markers")
    return pattern.sub(lambda _: f"{BEGIN}\n\n{suite_sections()}\n{END}", guide)


def updated_guide() -> str:
    """The guide as it must read: its hand-written parts, its sections regenerated."""
    return with_sections(GUIDE.read_text(encoding="utf-8"))
