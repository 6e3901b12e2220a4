"""The outcome vocabulary: how test outcomes roll up into a contract's outcome, and
that every schema, style and script of the kit uses the one vocabulary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import conformance
from conformance.results import outcomes
from conformance.results.outcomes import count, roll_up


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["passed", "passed"], "passed"),
        (["passed", "not_supported"], "passed"),
        (["not_supported", "not_supported"], "not_supported"),
        (["passed", "skipped"], "passed"),
        (["skipped"], "skipped"),
        (["passed", "waived"], "waived"),
        (["passed", "failed", "error"], "failed"),
        (["error", "passed"], "error"),
        (["failed", "timed_out"], "timed_out"),
        (["timed_out", "crashed", "failed"], "crashed"),
        (["not_supported", "failed"], "failed"),
    ],
)
def test_roll_up(outcomes, expected):
    """One failing test fails the contract (the most severe failure shows); an
    opt-out never turns into a pass, and never hides a failure."""
    assert roll_up(outcomes) == expected


def test_roll_up_needs_outcomes():
    """A contract with no test has no outcome: that is an error, not a pass."""
    with pytest.raises(ValueError):
        roll_up([])


def test_count_orders_and_drops_zeros():
    """Counts follow the outcome vocabulary's order and leave out zeros."""
    assert list(count(["failed", "passed", "failed"]).items()) == [("passed", 1), ("failed", 2)]


def _schema(package_file: str) -> dict:
    return json.loads((Path(conformance.__file__).parent / package_file).read_text())


def test_the_record_schema_names_every_outcome_once():
    """The record schema's outcome enum is the vocabulary, in its order."""
    schema = _schema("results/record.schema.json")
    enums = [node["enum"] for node in _walk(schema) if "passed" in node.get("enum", ())]
    assert enums == [[str(o) for o in outcomes.OUTCOMES]]


def test_the_matrix_schema_names_every_cell_status():
    """The matrix schema's cell statuses are ``CELL_OUTCOMES``, and a record's
    roll-up there is any outcome but ``skipped``."""
    definitions = _schema("matrix/matrix.schema.json")["$defs"]
    assert definitions["cell_outcome"]["enum"] == list(outcomes.CELL_OUTCOMES)
    assert definitions["record_outcome"]["enum"] == [o for o in outcomes.CELL_OUTCOMES if o != outcomes.NOT_RUN]


def test_every_cell_status_has_a_glyph_a_severity_and_a_colour():
    """Each status the matrix can show reads without colour (a glyph), sorts (a
    severity) and has its own style in the stylesheet; the stylesheet styles no
    status the kit does not have."""
    css = (Path(conformance.__file__).parent / "matrix" / "static" / "matrix.css").read_text()
    styled = set(re.findall(r"\.o-([a-z_]+)\b", css))
    assert styled == set(outcomes.CELL_OUTCOMES)
    assert set(outcomes.SEVERITY) == set(outcomes.CELL_OUTCOMES)
    assert set(outcomes.CELL_OUTCOMES) <= set(outcomes.GLYPHS)
    assert len(set(outcomes.GLYPHS.values())) == len(outcomes.GLYPHS)


def test_the_matrix_script_repeats_no_outcome_name():
    """The page's script reads the failing outcomes from the page the template wrote,
    so it cannot drift from the kit's list."""
    script = (Path(conformance.__file__).parent / "matrix" / "static" / "matrix.js").read_text()
    for failing in outcomes.FAILING:
        assert f'"{failing}"' not in script


def test_roll_up_order_puts_every_failure_before_any_pass():
    """The roll-up order holds every outcome once, failures first in their order."""
    assert sorted(outcomes.ROLL_UP_ORDER) == sorted(outcomes.OUTCOMES)
    assert outcomes.ROLL_UP_ORDER[:len(outcomes.FAILING)] == outcomes.FAILING


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)
