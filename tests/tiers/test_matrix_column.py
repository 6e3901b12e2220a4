"""The matrix overview's tier column says what ``conformance tiers`` says."""

from __future__ import annotations

import json

import pytest
from worked_example import AS_OF, write_example

from conformance.cli import main
from conformance.matrix.build import build_matrix
from conformance.results.timestamps import parse_timestamp


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return write_example(tmp_path_factory.mktemp("records"))


def test_the_overview_shows_each_platforms_computed_tier(records, capsys):
    """Rule: each platform's overview row carries the tier the policy gives its
    records, the same as ``conformance tiers``, with what the next tier still needs."""
    assert main(["tiers", str(records), "--as-of", AS_OF, "--allow-unreleased", "--json"]) == 0
    computed = {r["key"]["plugin"]: r for r in json.loads(capsys.readouterr().out)}

    matrix = build_matrix([records], now=parse_timestamp(AS_OF), allow_unreleased=True).matrix
    plugin_of = {column.id: column.plugin for column in matrix.columns}
    shown = {plugin_of[row.column]: row.cells["tier"] for row in matrix.overview}
    assert {plugin: cell.text for plugin, cell in shown.items()} == {
        plugin: result["tier"] for plugin, result in computed.items()}
    # The cell names the tier once: its rules follow without the tier's prefix.
    needed = ", ".join(check["rule"].removeprefix("official.") for check in computed["tpu_lab"]["missing"])
    assert shown["tpu_lab"].detail == f"for official: {needed}"
    assert shown["tpu_lab"].sort > shown["newchip"].sort
    assert "tier" in [heading.key for heading in matrix.overview_columns]
