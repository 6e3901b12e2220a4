"""``matrix.md``: the overview as a Markdown table, then each platform's contracts that
did not pass, for docs pages and CI annotations (a grid of hundreds of platforms is
no table anyone reads in Markdown; the HTML pages hold it).

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
        lines += [f"**{presentation.plural(len(matrix.rejected), 'record')} rejected:**", ""]
        lines += [f"- {escape(r.path)}: {escape(r.reason)}" for r in matrix.rejected]
        lines.append("")
    if not matrix.columns:
        lines += ["No record was accepted: there is nothing to show.", ""]
        return "\n".join(lines)
    fields = matrix.overview_columns
    lines.append(_row([escape(f.heading) for f in fields]))
    lines.append(_row(["---"] * len(fields)))
    for row in matrix.overview:
        lines.append(_row([escape(" — ".join(filter(None, (row.cells[f.key].text, row.cells[f.key].detail))))
                           for f in fields]))
    lines += ["", "## Contracts not passed", ""]
    for column in matrix.columns:
        not_passed = [c.id for c in matrix.contracts if column.cells[c.id].outcome != "passed"]
        heading = escape(f"{column.plugin} on {column.device} ({column.distribution} {column.plugin_version})")
        lines.append(f"- **{heading}**: " + ("every contract passed" if not not_passed else
                     "; ".join(f"{escape(c)} {_cell(column, c)}" for c in not_passed)))
    return "\n".join(lines) + "\n"
