"""Platform histories made in Python, as the tier rules see them (``Evidence``).

A history is a string of verdict letters, oldest first, one record a day ending on
the day before ``NOW``: ``C`` CONFORMANT, ``N`` NOT CONFORMANT, ``I`` INCOMPLETE,
``?`` not judged by this kit. Each record passes one contract of every suite.
"""

from __future__ import annotations

import datetime

from conformance.tiers.evidence import (
    CONFORMANT,
    INCOMPLETE,
    NOT_CHECKED,
    NOT_CONFORMANT,
    Evidence,
    PlatformKey,
)

NOW = datetime.datetime(2026, 11, 25, 12, 0, tzinfo=datetime.timezone.utc)
VERDICTS = {"C": CONFORMANT, "N": NOT_CONFORMANT, "I": INCOMPLETE, "?": NOT_CHECKED}
SUITES = ("platform", "attention", "worker", "communicator", "engine")
EVERY_SUITE_PASSED = {f"{suite}.area.rule": "passed" for suite in SUITES}


def key(plugin: str) -> PlatformKey:
    return PlatformKey(f"{plugin}-dist", plugin, f"{plugin.upper()} device")


def history(plugin: str, verdicts: str, *, trust: str = "ci", days_ago: int = 1, kit: str = "0.1.0",
            outcomes: dict | None = None, expired: tuple[str, ...] = ()) -> list[Evidence]:
    """Records of ``plugin``, oldest first, the newest ``days_ago`` days before NOW.
    ``outcomes`` and ``expired`` (expired waivers) go into the newest record only."""
    records = []
    for age, letter in zip(range(days_ago + len(verdicts) - 1, days_ago - 1, -1), verdicts):
        newest = age == days_ago
        records.append(Evidence(
            key=key(plugin), ref=f"{plugin}/day-{age}.record.json", started=NOW - datetime.timedelta(days=age),
            kit_version=kit, contract_version="0.1", plugin_version="1.0", engine=f"conformance {kit}",
            device_type="npu", verdict=VERDICTS[letter], trust=trust,
            outcomes={**EVERY_SUITE_PASSED, **(outcomes or {})} if newest else dict(EVERY_SUITE_PASSED),
            expired_waivers=expired if newest else ()))
    return records
