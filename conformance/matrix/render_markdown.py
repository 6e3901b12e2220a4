"""``matrix.md``: the grid as a Markdown table, for docs pages and CI annotations.

tabulate escapes nothing in its Markdown formats, so cells are escaped here: a
record's text can hold ``|`` (which would split the row), backticks, brackets (a
link), and HTML, which Buildkite's and GitHub's renderers would otherwise interpret.
"""

from __future__ import annotations

import re

from conformance.matrix import presentation
from conformance.matrix.model import Column, Matrix

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|#~!])")


def escape(text: str) -> str:
    """``text`` as literal Markdown on one line: HTML as entities, Markdown
    punctuation backslash-escaped."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _header(column: Column) -> str:
    parts = [f"**{escape(column.plugin)}** on {escape(column.device)}",
             escape(f"{column.distribution} {column.plugin_version}"),
             *([escape(column.bridged)] if column.bridged else []),
             escape(f"kit {column.kit_version}, contract {column.contract_version}"),
             escape(presentation.day(column.date)), escape(column.verdict),
             escape(column.trust_label)]
    if column.unreleased:
        parts.append("⚠ unreleased kit: " + escape(column.unreleased))
    if column.partial:
        parts.append(escape(column.partial))
    if column.stale:
        parts.append("⚑ stale: " + escape(column.stale))
    return "<br>".join(parts)


def _cell(column: Column, contract: str) -> str:
    cell = column.cells[contract]
    text = presentation.status(cell.outcome)
    if cell.regressed_since:
        text += f" ▼ regressed (passed {presentation.day(cell.regressed_since)})"
    if cell.flaky:
        text += " ≋ flaky"
    if cell.waiver and cell.waiver.expired:
        text += " (waiver expired " + escape(cell.waiver.expires or "") + ")"
    return text


def render_markdown(matrix: Matrix) -> str:
    lines = ["# Hardware support matrix", "",
             f"_{matrix.generated.note}_", "", escape(matrix.stale_rule), ""]
    if matrix.unreleased_note:
        lines += ["**⚠ Unreleased kits.** " + escape(matrix.unreleased_note), ""]
    if matrix.rejected:
        lines += [f"**{len(matrix.rejected)} records rejected:**", ""]
        lines += [f"- {escape(r.path)}: {escape(r.reason)}" for r in matrix.rejected]
        lines.append("")
    if not matrix.columns:
        lines += ["No record was accepted: there is nothing to show.", ""]
        return "\n".join(lines)
    lines.append(_row(["contract", *(_header(c) for c in matrix.columns)]))
    lines.append(_row(["---"] * (len(matrix.columns) + 1)))
    lines.append(_row(["**counts**", *(escape(", ".join(f"{n} {presentation.WORDS[o]}"
                                                        for o, n in c.counts.items()))
                                       for c in matrix.columns)]))
    for contract in matrix.contracts:
        lines.append(_row([escape(contract.id), *(_cell(c, contract.id) for c in matrix.columns)]))
    return "\n".join(lines) + "\n"
