"""The model as JSON data and back: what ``matrix.json`` and the platform files hold,
and what the index keeps of a platform line between builds.

``dataclasses.asdict`` deep-copies every value on the way, which for a few hundred
platforms of 300 cells each took longer than rendering their pages; ``to_data``
only walks the fields.
"""

from __future__ import annotations

import dataclasses
import functools

from conformance.matrix.model import (
    CapabilityCell,
    Cell,
    Column,
    Figure,
    History,
    Performance,
    Run,
    SuiteCount,
    TestRun,
    Transition,
    Waiver,
)


@functools.cache
def field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def to_data(value: object) -> object:
    """Dataclasses as dicts, recursively; lists and dicts walked; the rest as is."""
    if dataclasses.is_dataclass(value):
        return {name: to_data(getattr(value, name)) for name in field_names(type(value))}
    if isinstance(value, list):
        return [to_data(item) for item in value]
    if isinstance(value, dict):
        return {key: to_data(item) for key, item in value.items()}
    return value


def _cell(data: dict) -> Cell:
    waiver = data["waiver"]
    return Cell(**{**data, "waiver": Waiver(**waiver) if waiver else None,
                   "tests": [TestRun(**test) for test in data["tests"]]})


def column_from(data: dict) -> Column:
    performance = data["performance"]
    if performance is not None:
        performance = Performance(performance["device"], performance["measured_at"],
                                  [Figure(**figure) for figure in performance["figures"]])
    return Column(**{**data, "cells": _cells(data["cells"]),
                     "suites": [SuiteCount(**s) for s in data["suites"]], "performance": performance})


def _cells(data: dict[str, dict | str]) -> dict[str, Cell]:
    """Cells without tests or a waiver are mostly alike (an outline's, all but a few):
    each distinct one is made once and shared, as a cell is never changed."""
    alike: dict[tuple, Cell] = {}
    cells = {}
    for contract, cell in data.items():
        if isinstance(cell, str):  # an outline's cell that is its outcome alone (``outline_data``)
            key = (cell, "", None, None, False)
            if key not in alike:
                alike[key] = Cell(cell, "", None)
            cells[contract] = alike[key]
            continue
        if cell["tests"] or cell["waiver"]:
            cells[contract] = _cell(cell)
            continue
        key = (cell["outcome"], cell["message"], cell["duration"], cell["regressed_since"], cell["flaky"])
        if key not in alike:
            alike[key] = _cell(cell)
        cells[contract] = alike[key]
    return cells


def capability_cells_from(data: dict[str, dict[str, dict]]) -> dict[str, dict[str, CapabilityCell]]:
    """A line's capability cells (``capabilities.line_cells``)."""
    return {kind: {value: CapabilityCell(**cell) for value, cell in values.items()} for kind, values in data.items()}


def history_from(data: dict) -> History:
    return History(**{**data, "runs": [Run(**run) for run in data["runs"]],
                      "transitions": [Transition(**t) for t in data["transitions"]]})


def outline(column: Column) -> Column:
    """``column`` without what only its platform's own page and file show: each cell's
    message, duration and tests."""
    return dataclasses.replace(column, cells={c: dataclasses.replace(cell, message="", duration=None, tests=[])
                                              for c, cell in column.cells.items()})


def outline_data(column: Column) -> dict:
    """``outline(column)`` as data, each cell that is its outcome alone (no waiver, no
    regression, not flaky: nearly all) written as the outcome: a one-record rebuild
    reads the outlines of every other platform line, and whole cells were most of
    their text."""
    data = to_data(outline(column))
    data["cells"] = {contract: cell["outcome"] if _plain(cell) else cell for contract, cell in data["cells"].items()}
    return data


def _plain(cell: dict) -> bool:
    return not (cell["waiver"] or cell["regressed_since"] or cell["flaky"])


def history_outline(history: History) -> History:
    """``history`` without its transitions, which only its platform's own page shows."""
    return dataclasses.replace(history, transitions=[])
