"""``docs/plugin-guide.md``: its generated part agrees with the suites, and the check
that says so can fail."""

from __future__ import annotations

from conftest import REPO

from conformance.scaffold.guide import BEGIN, END, GUIDE, with_sections
from conformance.suites.registry import contracts


def test_the_guide_lists_what_the_suites_check():
    """Rule: the guide's suite sections are exactly what the suites' markers and
    docstrings generate (regenerate: python -m conformance.dev regenerate)."""
    text = GUIDE.read_text(encoding="utf-8")
    assert with_sections(text) == text, "docs/plugin-guide.md is stale: run python -m conformance.dev regenerate"
    generated = text[text.index(BEGIN):text.index(END)]
    missing = [c for c in contracts() if f"| `{c}` |" not in generated]
    assert not missing and len(contracts()) > 50, missing


def test_a_stale_guide_is_caught():
    text = GUIDE.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `platform.runtime.memory` |"))
    stale = text.replace(row, row.replace("falls back", "stays"))
    assert with_sections(stale) != stale
    assert with_sections(stale) == text


def test_the_readme_links_the_guide():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/plugin-guide.md)" in readme and "conformance init" in readme
