"""Which plugin version was verified with which engine and kit release, and how it went.

Every judged record is one run of a plugin version on an engine (the kit's own
reference engine, or the bridged engine at its installed version, e.g. vLLM's) under a
kit release; the newest record of each combination gives its verdict. This is the
data of the "plugin version x engine/kit release" view: a vendor reads which of its
versions works with which release, a user which release to pin.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import TypeVar

from conformance.tiers.evidence import Evidence, PlatformKey

#: What makes a combination: the attributes a run is grouped by, here and in the
#: matrix's view of it (``conformance.matrix.compatibility``).
COMBINATION = ("plugin_version", "engine", "kit_version", "contract_version")

R = TypeVar("R")


@dataclasses.dataclass(frozen=True)
class Combination:
    plugin_version: str
    engine: str
    kit_version: str
    contract_version: str
    verdict: str  # of the newest record of the combination
    newest: str  # that record's ref
    runs: int  # judged records of the combination


def newest_of_each(runs: Iterable[R], when: Callable[[R], object]) -> list[tuple[tuple[str, ...], R, int]]:
    """``runs`` (anything with ``COMBINATION``'s attributes) grouped by combination:
    each combination's values, its newest run by ``when`` and how many runs it has,
    newest first."""
    grouped: dict[tuple[str, ...], list[R]] = {}
    for run in runs:
        grouped.setdefault(tuple(getattr(run, name) for name in COMBINATION), []).append(run)
    found = [(combination, max(group, key=when), len(group)) for combination, group in grouped.items()]
    return sorted(found, key=lambda entry: when(entry[1]), reverse=True)


def compatibility(records: Iterable[Evidence]) -> dict[PlatformKey, list[Combination]]:
    """Each platform's combinations, newest first, of its judged records."""
    by_platform: dict[PlatformKey, list[Evidence]] = {}
    for record in records:
        if record.judged:
            by_platform.setdefault(record.key, []).append(record)
    return {key: [Combination(*combination, newest.verdict, newest.ref, runs)
                  for combination, newest, runs in newest_of_each(by_platform[key], lambda r: r.started)]
            for key in sorted(by_platform)}
