"""Hostile text from records reaches no page as markup, and no link but http(s)."""

from __future__ import annotations

import pytest
from generated_records import make_record, write_record
from page_parsing import parse_page
from scenario import CONTRACTS, HOSTILE, NOW, write_scenario

from conformance.matrix.build import build_matrix
from conformance.matrix.site import write_site

PLUGIN = '"><script>alert(5)</script>'
DEVICE = "<b onmouseover=alert(6)>NPU</b>"


@pytest.fixture(scope="module")
def site(tmp_path_factory, kits):
    folder = tmp_path_factory.mktemp("hostile")
    write_scenario(folder)
    results = {c: "passed" for c in CONTRACTS}
    results["worker.rpc.methods"] = [("failed", f"boom {HOSTILE} | a `b` [c](javascript:alert(7))")]
    write_record(folder, "x/hostile.record.json", make_record(
        results, plugin=PLUGIN, device=DEVICE, version="1 | `2`", started="2026-11-24T00:00:00+00:00"))
    built = build_matrix([folder], now=NOW, kits=kits)
    return write_site(built, tmp_path_factory.mktemp("out") / "site")


def pages(site):
    return sorted(site.rglob("*.html"))


def test_no_record_text_reaches_html_as_markup(site):
    for page in pages(site):
        html = page.read_text(encoding="utf-8")
        for hostile in (HOSTILE, PLUGIN, DEVICE, "<script>alert"):
            assert hostile not in html, page.name
        elements = parse_page(page).elements
        assert not [e for e in elements if e[0] in ("img", "b")], page.name
        assert [e for e in elements if e[0] == "script"] == [("script", {"src": e[1]["src"], "defer": None})
                                                            for e in elements if e[0] == "script"]
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "&#34;&gt;&lt;script&gt;alert(5)&lt;/script&gt;" in index
    platform = next(p for p in pages(site) if "script-alert-5" in p.name).read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in platform


def test_the_diff_pages_data_holds_record_text_as_escaped_json(site):
    scripts = sorted((site / "platforms").glob("*.runs.js"))
    assert len(scripts) == len(list((site / "platforms").glob("*.html")))
    for script in scripts:
        text = script.read_text(encoding="utf-8")
        assert "<" not in text and ">" not in text and "&" not in text, script.name
        assert text.isascii()
    hostile = next(s for s in scripts if "script-alert-5" in s.name).read_text()
    assert "\\u003cscript\\u003ealert(5)\\u003c/script\\u003e" in hostile


def test_only_http_links_leave_the_site_and_they_carry_noopener(site):
    for page in pages(site):
        for anchor in parse_page(page).having("a", "href"):
            href = anchor["href"]
            assert "javascript" not in href.lower(), (page.name, href)
            if "://" in href:
                assert href.startswith(("http://", "https://")), (page.name, href)
                assert "noopener" in (anchor.get("rel") or ""), (page.name, href)
            else:
                assert not href.startswith(("/", "data:")), (page.name, href)


def test_markdown_escapes_pipes_backticks_brackets_and_html(site):
    markdown = (site / "matrix.md").read_text(encoding="utf-8")
    assert "<script" not in markdown and "<b " not in markdown and "<img" not in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| \"&gt;&lt;script&gt;"))
    assert "1 \\| \\`2\\`" in row  # the version's pipe and backticks stay text
    header = next(line for line in markdown.splitlines() if line.startswith("| plugin |"))
    assert row.count(" | ") == header.count(" | ")
    assert "](javascript" not in markdown
