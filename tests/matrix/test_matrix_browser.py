"""The page in a real browser: headless Chromium (Debian's package) driven by
Playwright. In CI (``CI=true``) a missing browser fails the test: it must not pass
by being skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from generated_records import make_record, write_record
from scenario import CONTRACTS, HOSTILE, NOW, column, write_scenario

from conformance.matrix.build import build_matrix
from conformance.matrix.site import write_site

#: Debian's chromium binary (``/usr/bin/chromium`` is a shell wrapper around it).
CHROMIUM = Path("/usr/lib/chromium/chromium")


def _unavailable(reason: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: .ci/run installs it, so CI must have it")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory, kits):
    folder = tmp_path_factory.mktemp("records")
    write_scenario(folder)
    results = {c: "passed" for c in CONTRACTS}
    results["worker.rpc.methods"] = [("failed", HOSTILE)]
    write_record(folder, "evil/evil.record.json", make_record(
        results, plugin=HOSTILE, device=HOSTILE, started="2026-11-24T00:00:00+00:00"))
    built = build_matrix([folder], now=NOW, kits=kits)
    return built.matrix, write_site(built, tmp_path_factory.mktemp("out") / "site")


def visible_rows(page) -> list[str]:
    return page.eval_on_selector_all(
        "#grid tr.contract-row", "rows => rows.filter(r => !r.hidden && r.offsetParent).map(r => r.id)")


def test_the_page_renders_filters_sorts_and_runs_no_hostile_script(browser, site, tmp_path):
    matrix, folder = site
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors, dialogs = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto((folder / "index.html").as_uri())
    page.wait_for_load_state("load")

    assert page.locator("#grid thead th.platform").count() == len(matrix.columns)
    assert visible_rows(page) == CONTRACTS
    assert page.locator("#controls").is_visible()
    assert page.text_content("#filter-count") == f"{len(CONTRACTS)} of {len(CONTRACTS)} contracts shown"

    page.fill("#filter-text", "kv_cache")
    assert visible_rows(page) == [c for c in CONTRACTS if "kv_cache" in c]
    assert "attention.kv_cache.write" in visible_rows(page)
    page.fill("#filter-text", "")
    page.select_option("#filter-status", "crashed")
    assert visible_rows(page) == ["communicator.all_reduce.sum"]
    page.select_option("#filter-status", "")
    page.check("#filter-hide-passing")
    shown = visible_rows(page)
    assert shown and all(any(c.cells[r].outcome != "passed" for c in matrix.columns) for r in shown)
    page.uncheck("#filter-hide-passing")

    npu = column(matrix, "npu")
    page.click(f"#col-{npu.id}")
    attention = page.eval_on_selector_all(
        "tbody[data-suite=attention] tr.contract-row", "rows => rows.map(r => r.id)")
    severities = [npu.cells[r].outcome for r in attention]
    assert severities[:2] == ["failed", "error"] and severities[-1] == "passed"
    page.click(f"#col-{npu.id}")
    assert page.eval_on_selector("tbody[data-suite=attention] tr.contract-row", "r => r.id") != attention[0]

    page.screenshot(path=str(tmp_path / "matrix.png"), full_page=False)
    assert (tmp_path / "matrix.png").stat().st_size > 10_000
    assert dialogs == [] and errors == []
    assert page.evaluate("document.querySelectorAll('img').length") == 0


def test_the_page_is_complete_without_javascript(browser, site):
    matrix, folder = site
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto((folder / "index.html").as_uri())
    assert visible_rows(page) == CONTRACTS
    assert not page.locator("#controls").is_visible()
    cells = page.eval_on_selector_all("#grid td.cell", "cells => cells.map(c => c.innerText)")
    assert len(cells) == len(CONTRACTS) * len(matrix.columns)
    assert all(text.split()[1] in ("passed", "failed", "error", "crashed", "timed", "not", "waived")
               for text in cells)
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


def test_each_column_shows_who_vouches_for_it(browser, vouched_site, tmp_path):
    matrix, folder = vouched_site
    page = browser.new_page(viewport={"width": 1400, "height": 700})
    page.goto((folder / "index.html").as_uri())
    badges = {c.plugin: page.inner_text(f"#col-{c.id} .trust") for c in matrix.columns}
    assert badges == {"npu": "signed by acme", "cpu": "built by CI", "gpu": "self-reported"}
    styles = {c.plugin: page.eval_on_selector(f"#col-{c.id} .trust", "e => getComputedStyle(e).borderStyle")
              for c in matrix.columns}
    assert styles["gpu"] == "dashed" and styles["npu"] == "solid"  # the second channel
    assert page.is_visible("#trust-rule")
    page.screenshot(path=str(tmp_path / "trust.png"), full_page=False)
    assert (tmp_path / "trust.png").stat().st_size > 10_000
