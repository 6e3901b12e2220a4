"""Fixtures of the matrix tests: the scenario's records (``scenario.py``), the
matrix built from them, and a headless Chromium. In CI (``CI=true``) a missing
browser fails the browser tests: they must not pass by being skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scenario import NOW, OLD_RELEASE, write_scenario

from conformance.matrix.build import build_matrix
from conformance.matrix.kits import KnownKits, installed_kit


@pytest.fixture(scope="session")
def kits() -> KnownKits:
    """The installed kit, released, and an earlier release."""
    return KnownKits(installed_kit(), (installed_kit(), OLD_RELEASE))


@pytest.fixture(scope="session")
def scenario(tmp_path_factory, kits):
    """(records folder, {name: record path}, Built) of the scenario."""
    folder = tmp_path_factory.mktemp("records")
    paths = write_scenario(folder)
    return folder, paths, build_matrix([folder], now=NOW, kits=kits)


@pytest.fixture(scope="session")
def matrix(scenario):
    return scenario[2].matrix


#: Debian's chromium binary (``/usr/bin/chromium`` is a shell wrapper around it).
CHROMIUM = Path("/usr/lib/chromium/chromium")


def _unavailable(reason: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: .ci/run installs it, so CI must have it")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def axe():
    """axe-core's runner (bundled by axe-playwright-python, a test dependency)."""
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError:
        _unavailable("axe-playwright-python is not installed (pip install -e '.[test]')")
    return Axe()


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
