"""The HTML pages: the grid with its capabilities view, one history page per
platform line, and the contracts' rules.

Autoescaping is on for every template whatever its file name (Jinja's default list
would leave ``.html.j2`` unescaped), and undefined names are errors, so a typo in a
template fails the build instead of rendering as nothing.
"""

from __future__ import annotations

import itertools

import jinja2

from conformance.matrix import presentation
from conformance.matrix.model import Matrix
from conformance.results.outcomes import CELL_OUTCOMES, FAILING


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.matrix", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        outcomes=CELL_OUTCOMES,
        failing=[str(outcome) for outcome in FAILING],
        glyph=presentation.GLYPHS.__getitem__,
        word=presentation.WORDS.__getitem__,
        severity=presentation.SEVERITY.__getitem__,
        cap_glyph=presentation.CAPABILITY_GLYPHS.__getitem__,
        cap_word=presentation.CAPABILITY_WORDS.__getitem__,
        duration=presentation.duration,
        day=presentation.day,
        figure=presentation.figure,
    )
    return env


def render_pages(matrix: Matrix) -> dict[str, str]:
    """Site-relative path -> page text."""
    env = environment()
    groups = [(suite, list(contracts))
              for suite, contracts in itertools.groupby(matrix.contracts, key=lambda c: c.suite)]

    def row_outcomes(contract: str) -> list[str]:
        return sorted({column.cells[contract].outcome for column in matrix.columns})

    pages = {
        "index.html": env.get_template("index.html.j2").render(
            matrix=matrix, title="Hardware support matrix", root="", groups=groups,
            row_outcomes=row_outcomes),
        "contracts.html": env.get_template("contracts.html.j2").render(
            matrix=matrix, title="Contracts and their rules", root=""),
    }
    platform_page = env.get_template("platform.html.j2")
    for history in matrix.histories:
        pages[f"platforms/{history.column}.html"] = platform_page.render(
            matrix=matrix, history=history, root="../",
            title=f"{history.plugin} on {history.device}: history")
    return pages
