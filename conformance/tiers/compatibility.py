"""Which plugin version was verified with which engine and kit release, and how it went.

Every judged record is one run of a plugin version on an engine (the kit's own
reference engine, or the bridged engine at its installed version, e.g. vLLM's) under a
kit release; the newest record of each combination gives its verdict. This is the
data of the "plugin version x engine/kit release" view: a vendor reads which of its
versions works with which release, a user which release to pin.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from conformance.tiers.evidence import Evidence, PlatformKey


@dataclasses.dataclass(frozen=True)
class Combination:
    plugin_version: str
    engine: str
    kit_version: str
    contract_version: str
    verdict: str  # of the newest record of the combination
    newest: str  # that record's ref
    runs: int  # judged records of the combination


def compatibility(records: Iterable[Evidence]) -> dict[PlatformKey, list[Combination]]:
    """Each platform's combinations, newest first."""
    grouped: dict[PlatformKey, dict[tuple, list[Evidence]]] = {}
    for record in records:
        if record.judged:
            combination = (record.plugin_version, record.engine, record.kit_version, record.contract_version)
            grouped.setdefault(record.key, {}).setdefault(combination, []).append(record)
    table = {}
    for key in sorted(grouped):
        rows = []
        for (plugin_version, engine, kit, contract), runs in grouped[key].items():
            newest = max(runs, key=lambda r: r.started)
            rows.append((newest.started, Combination(plugin_version, engine, kit, contract,
                                                     newest.verdict, newest.ref, len(runs))))
        table[key] = [combination for _, combination in sorted(rows, key=lambda row: row[0], reverse=True)]
    return table
