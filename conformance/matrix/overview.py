"""The overview: one row per platform line, the page a reader starts from.

Its columns are data (``OverviewColumn``): a heading, what the column means, and how a
row's cell reads from the platform's ``Column``. Adding a column, such as a support
tier with its explanation, is one more entry in ``overview_columns``; the page, its
sorting and ``matrix.json`` follow from the list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from conformance.matrix import presentation, standing
from conformance.matrix.model import Column, OverviewCell, OverviewRow


@dataclasses.dataclass(frozen=True)
class OverviewColumn:
    key: str
    heading: str
    explanation: str  # shown under the table, and as the heading's description
    cell: Callable[[Column], OverviewCell]


def _platform(column: Column) -> OverviewCell:
    return OverviewCell(column.plugin, column.plugin,
                        f"{column.device} · {column.distribution} {column.plugin_version}")


#: The overview's word for each device kind, with the platform page's note shortened.
_KINDS = {"host_cpu": ("host CPU", "torch device type cpu: an emulation unless the device is a CPU"),
          "bridged": ("bridged", "")}


def _device(column: Column) -> OverviewCell:
    word, detail = _KINDS.get(column.device_kind, (column.device_type, "torch device type"))
    return OverviewCell(word, word, column.bridged or detail, f"kind-{column.device_kind}")


def _verdict(column: Column) -> OverviewCell:
    detail = column.partial or ""
    if column.unreleased:
        detail = f"⚠ unreleased kit: {column.unreleased}" + (f"; {detail}" if detail else "")
    return OverviewCell(column.verdict, column.verdict, detail, presentation.verdict_class(column.verdict))


def _suite(name: str) -> Callable[[Column], OverviewCell]:
    def cell(column: Column) -> OverviewCell:
        count = next((s for s in column.suites if s.suite == name), None)
        if count is None:
            return OverviewCell("–", -1.0, "no contract of this suite")
        failing = f"{count.failing} failing" if count.failing else ""
        other = f"{count.other} not passed otherwise" if count.other else ""
        # Sorted by the share that passed, so a failing suite sorts first ascending.
        return OverviewCell(f"{count.passed}/{count.total}", count.passed / count.total,
                            "; ".join(filter(None, [failing, other])),
                            "suite-failing" if count.failing else "suite-ok")
    return cell


def _staleness(column: Column) -> OverviewCell:
    if column.stale:
        return OverviewCell("⚑ stale", 1.0, column.stale, "stale-mark")
    return OverviewCell("current", 0.0, f"last run {presentation.day(column.date)}")


def _trust(column: Column) -> OverviewCell:
    return OverviewCell(column.trust_label, column.trust_label, "", f"trust trust-{column.trust}")


def _performance(column: Column) -> OverviewCell:
    if column.performance is None or not column.performance.figures:
        return OverviewCell("–", -1.0, "no figures in the record")
    first = column.performance.figures[0]
    more = len(column.performance.figures) - 1
    return OverviewCell(f"{presentation.figure(first.value)} {first.unit}", first.value,
                        f"{first.label}, on {column.performance.device}"
                        + (f" (+{more} more on the platform page)" if more else ""))


def overview_columns(suites: list[str], tier: Callable[[Column], OverviewCell] | None = None) -> list[OverviewColumn]:
    """The overview's columns, with a count per suite of the kit, and each line's
    support tier when ``tier`` gives its cell."""
    return [
        OverviewColumn("platform", "plugin", "the plugin, its device, distribution and version", _platform),
        OverviewColumn("device", "device", "what computes the results: a device, the host CPU "
                       "(an emulation unless the device is a CPU), or another engine's plugin through a bridge",
                       _device),
        OverviewColumn("verdict", "verdict", "what `conformance verify` says of the newest record", _verdict),
        *([OverviewColumn("tier", "tier", standing.EXPLANATION, tier)] if tier is not None else []),
        *(OverviewColumn(f"suite-{suite}", suite, f"contracts of the {suite} suite that passed, of all its "
                         "contracts; failing and otherwise-ended ones counted below", _suite(suite))
          for suite in suites),
        OverviewColumn("stale", "staleness", "stale when the newest record is older than the stale rule allows",
                       _staleness),
        OverviewColumn("trust", "vouched for by", "who vouches for the newest record", _trust),
        OverviewColumn("performance", "performance", "the record's first headline figure, on its own "
                       "device; never compared across platforms", _performance),
    ]


def overview_rows(columns: list[Column], fields: list[OverviewColumn]) -> list[OverviewRow]:
    return [OverviewRow(column=c.id, cells={f.key: f.cell(c) for f in fields},
                        failing_suites=[s.suite for s in c.suites if s.failing])
            for c in columns]
