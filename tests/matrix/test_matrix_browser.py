"""The pages in a real browser: headless Chromium (Debian's package) driven by
Playwright (the ``browser`` fixture, in ``conftest.py``)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from generated_records import make_record, write_record
from scenario import CONTRACTS, HOSTILE, NOW, column, write_scenario

from conformance.matrix.build import build_matrix
from conformance.matrix.site import write_site


@pytest.fixture(scope="module")
def site(tmp_path_factory, kits):
    folder = tmp_path_factory.mktemp("records")
    write_scenario(folder)
    results = {c: "passed" for c in CONTRACTS}
    results["worker.rpc.methods"] = [("failed", HOSTILE)]
    write_record(folder, "evil/evil.record.json", make_record(
        results, plugin=HOSTILE, device=HOSTILE, started="2026-11-24T00:00:00+00:00"))
    for number in (10, 2, 1):  # natural order puts vendor2 before vendor10
        write_record(folder, f"vendor{number}/r.record.json", make_record(
            {c: "passed" for c in CONTRACTS}, plugin=f"vendor{number}", device="Chip", started="2026-11-24T00:00:00+00:00"))
    built = build_matrix([folder], now=NOW, kits=kits)
    return built.matrix, write_site(built, tmp_path_factory.mktemp("out") / "site")


@pytest.fixture()
def page(browser):
    """A page that records script errors and dialogs, which every test checks are none."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors, dialogs = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    assert dialogs == [] and errors == []
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    page.close()


def visible_rows(page) -> list[str]:
    return page.eval_on_selector_all(
        "#grid tr.contract-row", "rows => rows.filter(r => !r.hidden && r.offsetParent).map(r => r.id)")


def visible_columns(page) -> list[str]:
    return page.eval_on_selector_all(
        "#grid thead th.platform", "ths => ths.filter(t => t.offsetParent).map(t => t.dataset.column)")


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_the_grid_filters_rows_and_columns_keeps_them_in_the_url_and_sorts(page, site):
    matrix, folder = site
    page.goto((folder / "grid" / "1.html").as_uri())
    assert visible_columns(page) == [c.id for c in matrix.columns]
    assert visible_rows(page) == CONTRACTS
    assert page.locator("#controls").is_visible()

    page.fill("#filter-text", "kv_cache")
    assert visible_rows(page) == [c for c in CONTRACTS if "kv_cache" in c]
    page.fill("#filter-text", "")
    page.select_option("#filter-status", "crashed")
    assert visible_rows(page) == ["communicator.all_reduce.sum"]
    page.select_option("#filter-status", "")
    page.select_option("#filter-suite", "worker")
    assert visible_rows(page) == [c for c in CONTRACTS if c.startswith("worker.")]
    page.select_option("#filter-suite", "")
    page.fill("#filter-platform", "vendor")
    assert visible_columns(page) == [column(matrix, f"vendor{n}").id for n in (1, 2, 10)]
    page.check("#filter-hide-passing")
    assert visible_rows(page) == []  # every vendor passes everything
    assert query(page) == {"platform": ["vendor"], "hide_passing": ["1"]}

    # The URL is a permalink: opened again, it shows the same view.
    page.goto(page.url)
    assert visible_columns(page) == [column(matrix, f"vendor{n}").id for n in (1, 2, 10)]
    assert page.is_checked("#filter-hide-passing") and visible_rows(page) == []
    page.goto((folder / "grid" / "1.html").as_uri())

    npu = column(matrix, "npu")
    page.click(f"#col-{npu.id} button.sort")
    attention = page.eval_on_selector_all(
        "tbody[data-suite=attention] tr.contract-row", "rows => rows.map(r => r.id)")
    outcomes = [npu.cells[r].outcome for r in attention]
    assert outcomes[:2] == ["failed", "error"] and outcomes[-1] == "passed"
    page.click(f"#col-{npu.id} button.sort")
    assert page.eval_on_selector("tbody[data-suite=attention] tr.contract-row", "r => r.id") != attention[0]


def test_the_overview_filters_are_kept_in_the_url_and_sort_naturally(page, site):
    matrix, folder = site
    page.goto((folder / "index.html").as_uri() + "?verdict=INCOMPLETE")
    shown = page.eval_on_selector_all("#overview tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.id)")
    assert shown == [f"p-{column(matrix, 'gpu').id}"]
    assert page.input_value("#filter-verdict") == "INCOMPLETE"
    page.select_option("#filter-verdict", "")
    page.select_option("#filter-stale", "stale")
    assert query(page) == {"stale": ["stale"]}
    stale = page.eval_on_selector_all("#overview tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.id)")
    assert stale == [f"p-{c.id}" for c in matrix.columns if c.stale]
    page.select_option("#filter-stale", "")
    page.select_option("#filter-suite", "communicator")
    failing = page.eval_on_selector_all("#overview tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.id)")
    assert failing == [f"p-{column(matrix, 'npu').id}"]
    page.select_option("#filter-suite", "")

    page.fill("#filter-text", "vendor")
    page.click("#overview th[data-key=platform] button.sort")
    order = page.eval_on_selector_all("#overview tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.id)")
    assert order == [f"p-{column(matrix, f'vendor{n}').id}" for n in (1, 2, 10)]
    page.click("#overview th[data-key=platform] button.sort")
    order = page.eval_on_selector_all("#overview tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.id)")
    assert order == [f"p-{column(matrix, f'vendor{n}').id}" for n in (10, 2, 1)]


def test_the_grid_keeps_its_header_row_and_contract_column_in_view(page, site):
    matrix, folder = site
    page.set_viewport_size({"width": 700, "height": 500})
    page.goto((folder / "grid" / "1.html").as_uri())
    region = page.locator(".grid-scroll")
    region.evaluate("r => { r.scrollTop = 2000; r.scrollLeft = 2000; }")
    box = region.bounding_box()
    header = page.locator(f"#col-{matrix.columns[-1].id}").bounding_box()
    row_head = page.locator(f"tr[id='{CONTRACTS[-1]}'] th").bounding_box()
    assert abs(header["y"] - box["y"]) < 3  # the header row sits at the region's top
    assert abs(row_head["x"] - box["x"]) < 3  # the contract column at its left edge


def test_a_phone_gets_cards_without_sideways_scrolling(browser, site, tmp_path):
    matrix, folder = site
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    page.goto((folder / "index.html").as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    first = page.locator("#overview tbody tr").first.bounding_box()
    assert first["width"] <= 390 and first["height"] > 100  # a card: values stacked
    assert page.locator("#overview thead").is_hidden()
    for name in (f"platforms/{column(matrix, 'npu').id}.html", "diff.html", "grid/1.html"):
        page.goto((folder / name).as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, name
    page.close()


def test_a_cell_opens_the_tests_of_its_contract(page, site):
    matrix, folder = site
    npu = column(matrix, "npu")
    page.goto((folder / "grid" / "1.html").as_uri())
    page.click(f"tr[id='attention.forward.mixed'] td:nth-child({matrix.columns.index(npu) + 2}) a")
    assert page.url.endswith(f"platforms/{npu.id}.html#c-attention.forward.mixed")
    details = page.locator("tr[id='c-attention.forward.mixed'] details.tests")
    assert details.get_attribute("open") is not None
    assert "attention/test_forward.py::test_mixed[0]" in details.inner_text()
    # A passing cell holds no link; the script opens it on a click.
    page.goto((folder / "grid" / "1.html").as_uri())
    page.click(f"tr[id='{CONTRACTS[0]}'] td:nth-child({matrix.columns.index(npu) + 2})")
    page.wait_for_url(f"**/platforms/{npu.id}.html#c-{CONTRACTS[0]}")
    assert page.locator(f"tr[id='c-{CONTRACTS[0]}'] details.tests").get_attribute("open") is not None


def test_the_diff_page_lists_the_contracts_two_runs_disagree_on(page, site):
    matrix, folder = site
    cpu = column(matrix, "cpu")
    runs = next(h for h in matrix.histories if h.column == cpu.id).runs  # newest first
    page.goto((folder / "diff.html").as_uri() +
              f"?a_platform={cpu.id}&a_run={runs[1].id}&b_platform={cpu.id}&b_run={runs[0].id}")
    page.wait_for_function("document.querySelector('#diff tbody').rows.length > 0")
    rows = page.eval_on_selector_all("#diff tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))")
    # The scenario's cpu runs of the 10th and the 20th: decode and prefill went from passed to failed.
    assert rows == [["attention.forward.decode", "✔ passed", "✘ failed"],
                    ["attention.forward.prefill", "✔ passed", "✘ failed"]]
    assert page.text_content("#diff-summary").startswith("2 of ")
    # Two platforms, chosen on the page.
    page.select_option("#b-platform", column(matrix, "npu").id)
    page.wait_for_function("document.querySelector('#diff-b').textContent.startsWith('npu')")
    assert page.locator("#diff tbody tr").count() > 2
    # A platform id the page does not list is never loaded.
    page.goto((folder / "diff.html").as_uri() + "?a_platform=../../evil&b_platform=x")
    assert page.input_value("#a-platform") == matrix.columns[0].id


def test_the_pages_are_complete_without_javascript(browser, site):
    matrix, folder = site
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto((folder / "grid" / "1.html").as_uri())
    assert visible_rows(page) == CONTRACTS
    assert not page.locator("#controls").is_visible()
    cells = page.eval_on_selector_all("#grid td", "cells => cells.map(c => c.innerText)")
    assert len(cells) == len(CONTRACTS) * len(matrix.columns)
    assert all(text.split()[1] in ("passed", "failed", "error", "crashed", "timed", "not", "waived")
               for text in cells)
    page.goto((folder / "index.html").as_uri())
    assert page.locator("#overview tbody tr").count() == len(matrix.columns)
    context.close()


@pytest.fixture(scope="module")
def vouched_site(tmp_path_factory, kits):
    """A vendor-signed, a CI-built and a self-reported column."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from signing_keys import write_keyring

    from conformance.results.signing import sign_record

    vendor, ci = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    folder = tmp_path_factory.mktemp("vouched")
    write_keyring(folder, ("ci", ci))
    write_keyring(folder / "npu", ("acme", vendor))
    passing = {c: "passed" for c in CONTRACTS}
    write_record(folder, "npu/npu.record.json", sign_record(
        make_record(passing, plugin="npu", device="NPU-9", distribution="acme-npu"), vendor, "acme"))
    write_record(folder, "cpu/cpu.record.json", sign_record(make_record(
        passing, ci={"provider": "buildkite", "build_url": "https://buildkite.example/b/1"}), ci, "ci"))
    write_record(folder, "gpu/gpu.record.json", make_record(passing, plugin="gpu", device="GPU X"))
    built = build_matrix([folder], now=NOW, kits=kits)
    return built.matrix, write_site(built, tmp_path_factory.mktemp("vouched-out") / "site")


def test_each_platform_shows_who_vouches_for_it(page, vouched_site):
    matrix, folder = vouched_site
    page.goto((folder / "index.html").as_uri())
    badges = {c.plugin: page.inner_text(f"#p-{c.id} .trust") for c in matrix.columns}
    assert badges == {"npu": "signed by acme", "cpu": "built by CI", "gpu": "self-reported"}
    styles = {c.plugin: page.eval_on_selector(f"#p-{c.id} .trust", "e => getComputedStyle(e).borderStyle")
              for c in matrix.columns}
    assert styles["gpu"] == "dashed" and styles["npu"] == "solid"  # the second channel
    assert page.is_visible("#trust-rule")
    page.goto((folder / "platforms" / f"{matrix.columns[0].id}.html").as_uri())
    assert page.inner_text(".identity .trust") == "built by CI"
