"""Fixtures of the matrix tests: the scenario's records (``scenario.py``) and the
matrix built from them."""

from __future__ import annotations

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
