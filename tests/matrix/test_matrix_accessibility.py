"""Accessibility of every kind of page, checked by axe-core in headless Chromium:
no serious or critical violation at a desktop and a phone width; a skip link first
in the keyboard path; every scroll region reachable by keyboard.

axe-core's script comes bundled in the ``axe-playwright-python`` package (the test
extra), so CI needs no npm.
"""

from __future__ import annotations

import pytest
from generated_records import make_record, write_record
from scenario import CONTRACTS, NOW, column, write_scenario

from conformance.matrix.build import build_matrix
from conformance.matrix.site import write_site
from conformance.results.outcomes import CELL_OUTCOMES

#: axe-core's impacts that fail the build; "moderate" and "minor" are reported only.
BLOCKING = ("serious", "critical")
WIDTHS = (1400, 390)


@pytest.fixture(scope="module")
def site(tmp_path_factory, kits):
    """The scenario (every outcome, stale, partial, flaky, hostile text) and a vendor
    whose record carries performance figures."""
    folder = tmp_path_factory.mktemp("records")
    write_scenario(folder)
    figures = {"performance": {"device": "Chip", "measured_at": "2026-11-24T10:00:00+00:00", "figures": [
        {"name": "engine_output_tokens_per_s_batch_1", "value": 40.0, "unit": "tok/s"}]}}
    write_record(folder, "fast/r.record.json", make_record(
        {c: "passed" for c in CONTRACTS}, plugin="fast", device="Chip", extra=figures,
        started="2026-11-24T10:00:00+00:00"))
    built = build_matrix([folder], now=NOW, kits=kits)
    return built.matrix, write_site(built, tmp_path_factory.mktemp("out") / "site")


def pages(matrix) -> list[str]:
    cpu, npu = column(matrix, "cpu"), column(matrix, "npu")
    return ["index.html", "grid/1.html", f"platforms/{npu.id}.html", f"platforms/{cpu.id}.html",
            "capabilities.html", "contracts.html",
            f"diff.html?a_platform={cpu.id}&b_platform={npu.id}"]


def blocking(result: dict) -> list[str]:
    return [f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(map(str, v['nodes'][0]['target']))} "
            f"(+{len(v['nodes']) - 1} more)"
            for v in result["violations"] if v["impact"] in BLOCKING]


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_has_a_serious_or_critical_violation(browser, axe, site, width):
    matrix, folder = site
    page = browser.new_page(viewport={"width": width, "height": 900})
    found = {}
    for name in pages(matrix):
        path, _, query = name.partition("?")
        page.goto((folder / path).as_uri() + (f"?{query}" if query else ""))
        if name.startswith("diff.html"):
            page.wait_for_function("document.querySelector('#diff tbody').rows.length > 0")
        problems = blocking(axe.run(page).response)
        if problems:
            found[name] = problems
    page.close()
    assert found == {}


def test_the_scenario_shows_every_outcome_that_axe_checks_the_colours_of(matrix):
    shown = {cell.outcome for c in matrix.columns for cell in c.cells.values()}
    assert shown == set(CELL_OUTCOMES)


def test_the_keyboard_starts_at_a_skip_link_to_the_content(browser, site):
    matrix, folder = site
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    for name in ("index.html", "grid/1.html", f"platforms/{column(matrix, 'npu').id}.html"):
        page.goto((folder / name).as_uri())
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to content"
        assert page.locator(".skip-link").is_visible()  # shown once focused
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "main"
    page.close()


def test_every_scroll_region_is_reachable_by_keyboard_and_named(browser, site):
    matrix, folder = site
    page = browser.new_page(viewport={"width": 390, "height": 900})
    for name in ("index.html", "grid/1.html", f"platforms/{column(matrix, 'npu').id}.html"):
        page.goto((folder / name).as_uri())
        regions = page.eval_on_selector_all(
            ".scroll", "rs => rs.map(r => [r.tabIndex, r.getAttribute('role'), "
                       "r.getAttribute('aria-label') || r.getAttribute('aria-labelledby')])")
        assert regions and all(index == 0 and role == "region" and named for index, role, named in regions), name
    page.close()


def test_axe_fails_grey_text_on_white_as_the_old_page_had_it(browser, axe):
    """The check can fail: #777 on white, the old page's colour, is a serious violation."""
    page = browser.new_page()
    page.set_content('<html lang="en"><title>t</title><main><h1>t</h1>'
                     '<p style="color:#777">last verified</p></main></html>')
    assert [v["id"] for v in axe.run(page).response["violations"] if v["impact"] in BLOCKING] == ["color-contrast"]
    page.close()
