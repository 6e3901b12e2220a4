"""A platform page's "plugin version x engine/kit release" table, from its line's runs.

The grouping is the tiers' (``conformance.tiers.compatibility.newest_of_each``): a
combination is a plugin version on an engine under a kit release (and its contract
version), and its newest run gives its verdict. Unlike ``conformance tiers
--compatibility``, which counts only the records it judges, the page shows every run
of the line with the verdict its history table shows, "NOT CHECKED" included: a run
the kit does not judge (an earlier release's record, a mustpass profile's) was still
made, and the page says so rather than hiding the combination.
"""

from __future__ import annotations

import dataclasses

from packaging.version import InvalidVersion, Version

from conformance.matrix.model import Run
from conformance.matrix.presentation import natural_key
from conformance.results.timestamps import parse_timestamp
from conformance.tiers.compatibility import newest_of_each


@dataclasses.dataclass(frozen=True)
class Release:
    """A column: an engine under a kit release."""

    engine: str
    kit_version: str
    contract_version: str


@dataclasses.dataclass(frozen=True)
class Verified:
    """A cell: the newest run of a combination, and how many runs it has."""

    verdict: str
    runs: int
    date: str
    record: str  # the site-relative path of the newest run's record copy


@dataclasses.dataclass(frozen=True)
class VersionRow:
    plugin_version: str
    cells: list[Verified | None]  # one per column; None: the combination was not run


@dataclasses.dataclass(frozen=True)
class CompatibilityTable:
    columns: list[Release]  # newest kit release first
    rows: list[VersionRow]  # newest plugin version first


def version_order(version: str) -> tuple:
    """Sorts versions oldest first: PEP 440 versions by their order ("1.10" after
    "1.9", "1.0rc1" before "1.0"), after any version that is not one (naturally); the
    text itself breaks a tie ("1.0" and "1.0.0"), so the order never depends on a set's."""
    try:
        return (1, Version(version), [], version)
    except InvalidVersion:
        return (0, Version("0"), natural_key(version), version)


def compatibility_table(runs: list[Run]) -> CompatibilityTable:
    """The table of a platform line's ``runs`` (a ``History``'s)."""
    cells = {combination: Verified(newest.verdict, count, newest.date, newest.record)
             for combination, newest, count in newest_of_each(runs, lambda run: parse_timestamp(run.date))}
    releases = sorted({Release(*combination[1:]) for combination in cells}, key=lambda r: (
        natural_key(r.engine), r.engine, natural_key(r.contract_version), r.contract_version))
    releases.sort(key=lambda r: version_order(r.kit_version), reverse=True)
    versions = sorted({combination[0] for combination in cells}, key=version_order, reverse=True)
    return CompatibilityTable(releases, [
        VersionRow(version, [cells.get((version, r.engine, r.kit_version, r.contract_version)) for r in releases])
        for version in versions])
