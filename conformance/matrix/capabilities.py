"""The capabilities view: what each platform declares, and whether the record shows
it working.

Which contracts exercised a declared value is the record's own account
(``capability_coverage``, written from what each test computed with), not a table
kept here. A value is "verified" only when every contract that exercised it passed
in a complete record; a failing or unexpectedly unsupported one makes it "failing",
naming the contract; a waived one (and none failing) makes it "waived", which is not
failing and not verified; a value no test exercised, or one judged by a run that did
not finish, stays "unverified".
"""

from __future__ import annotations

from conformance.matrix.model import CapabilityCell, CapabilityRow, Column
from conformance.matrix.sources import Accepted
from conformance.results.record import COVERED_DIMENSIONS

_NOT_DECLARED = CapabilityCell("not_declared", "")
_KIND_LABELS = {"dtypes": "dtype", "head_sizes": "head size", "block_sizes": "block size",
                "kv_cache_dtypes": "KV-cache dtype", "features": "feature"}


def declared(record: Accepted) -> dict[str, list[str]]:
    """The record's declared values per kind (nothing when the plugin's declaration
    could not be read: the record then holds an error text instead)."""
    capabilities = record.provenance["device"].get("capabilities")
    if not isinstance(capabilities, dict):
        return {}
    return {kind: [str(v) for v in capabilities.get(kind) or () if isinstance(v, (str, int))]
            for kind in COVERED_DIMENSIONS}


def _exercising(record: Accepted, kind: str, value: str,
                field: str = "capability_coverage") -> list[str] | None:
    """The contracts the record's ``field`` lists for ``value``: those that computed
    with it, or (``capability_config_checked``) those that only config-checked it.
    None: the record says nothing."""
    coverage = record.data.get(field)
    if not isinstance(coverage, dict) or not isinstance(coverage.get(kind), dict):
        return None
    contracts = coverage[kind].get(value)
    return [c for c in contracts if isinstance(c, str)] if isinstance(contracts, list) else []


def _judge(record: Accepted, column: Column, kind: str, value: str) -> CapabilityCell:
    """Judged by the column's cells, which count an expired waiver as failed."""
    contracts = _exercising(record, kind, value)
    if contracts is None:
        return CapabilityCell("unverified", "the record lists no capability coverage")
    if not contracts:
        if checked := _exercising(record, kind, value, "capability_config_checked"):
            return CapabilityCell("unverified", f"declared, but only config-checked ({', '.join(checked)}): "
                                                "no test computed with it")
        return CapabilityCell("unverified", "declared, but no test exercised it")
    outcomes = {c: column.cells[c].outcome if c in column.cells else "not_run" for c in contracts}
    failing = [f"{c}: {outcome}" for c, outcome in outcomes.items()
               if outcome not in ("passed", "not_run", "waived")]
    if failing:
        return CapabilityCell("failing", "; ".join(failing))
    waived = [c for c, outcome in outcomes.items() if outcome == "waived"]
    if waived:
        return CapabilityCell("waived", f"waived: {', '.join(waived)}; "
                                        f"{sum(o == 'passed' for o in outcomes.values())} of {len(contracts)} passed")
    passed = sum(outcome == "passed" for outcome in outcomes.values())
    if not record.data.get("complete"):
        return CapabilityCell("unverified", f"the run did not finish ({passed} contracts passed before it stopped)")
    if passed < len(contracts):
        return CapabilityCell("unverified", "not run: " + ", ".join(c for c, o in outcomes.items() if o != "passed"))
    return CapabilityCell("verified", f"{len(contracts)} contract{'s' * (len(contracts) != 1)} "
                                      "computed with it, all passed")


def line_cells(column: Column, record: Accepted) -> dict[str, dict[str, CapabilityCell]]:
    """The column's cell of each value its record (the column's) declares: kind ->
    value -> cell. A line's cells change only with its records, so they are kept
    with its outline between builds."""
    cells: dict[str, dict[str, CapabilityCell]] = {}
    for kind, values in declared(record).items():
        cells[kind] = {value: _judge(record, column, kind, value) for value in values}
        if "tensor_parallel" in cells[kind] and kind == "features":
            cells[kind]["tensor_parallel"] = _with_world_size(cells[kind]["tensor_parallel"], record)
    return cells


def capability_rows(column_ids: list[str], cells: list[dict[str, dict[str, CapabilityCell]]]) -> list[CapabilityRow]:
    """Rows for every value some column declares, in kind order; ``cells`` are the
    columns' ``line_cells``, in the same order."""
    rows = []
    for kind in COVERED_DIMENSIONS:
        values = sorted({v for line in cells for v in line.get(kind, ())},
                        key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))
        for value in values:
            row = {column_id: line.get(kind, {}).get(value, _NOT_DECLARED) for column_id, line in zip(column_ids, cells)}
            rows.append(CapabilityRow(kind, value, f"{_KIND_LABELS[kind]} {value}", row))
    return rows


def _with_world_size(cell: CapabilityCell, record: Accepted) -> CapabilityCell:
    """Tensor parallel is declared with its largest world, so its cells say it."""
    world = record.provenance["device"]["capabilities"].get("max_world_size")
    return CapabilityCell(cell.state, f"up to {world} ranks; {cell.detail}")
