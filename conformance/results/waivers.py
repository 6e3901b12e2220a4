"""How a waiver reads in a record, and when it has expired.

A waiver is a plugin's own, time-boxed exception (Kubernetes' conformance exceptions
are the model): it names a reason, a tracking link and optionally when it ends, a
date (the last day it applies) or a kit version (the first kit it no longer applies
to). The pytest plugin writes a waived test's message as ``describe`` words it, so a
verifier can tell, from the record alone, that a waiver has since expired: past its
date on the verifying clock, or in a record made by that kit version or a later one.
An expired waiver's contract counts as failing.
"""

from __future__ import annotations

import dataclasses
import datetime
import re

from packaging.version import InvalidVersion, Version

_WAIVED = re.compile(
    r"^waived: (?P<reason>.*) \((?P<link>\S*)\)(?: \[expires (?P<expires>[^\]\n]+)\])?$", re.DOTALL)
_KIT = "with kit "


@dataclasses.dataclass(frozen=True)
class WaivedMessage:
    reason: str
    link: str
    expires: str | None  # "2026-12-31" or "with kit 0.2.0"


def describe(reason: str, link: str, expires: str | None) -> str:
    """A waiver as a record's waived test message words it (after ``waived: ``)."""
    return f"{reason} ({link})" + (f" [expires {expires}]" if expires else "")


def expiry_text(expires: datetime.date | str) -> str:
    """``expires`` (a date, or a kit version) as ``describe`` takes it."""
    return expires.isoformat() if isinstance(expires, datetime.date) else f"{_KIT}{expires}"


def parse_waived(message: str) -> WaivedMessage | None:
    match = _WAIVED.match(message)
    return WaivedMessage(match["reason"], match["link"], match["expires"]) if match else None


def has_expired(expires: str, today: datetime.date, kit_version: str) -> bool:
    """Whether a waiver that ``expires`` no longer applies on ``today`` to a run of
    kit ``kit_version``. Unreadable expiries have expired: a waiver must say clearly
    how long it lasts."""
    try:
        if expires.startswith(_KIT):
            return Version(kit_version) >= Version(expires.removeprefix(_KIT))
        return today > datetime.date.fromisoformat(expires)
    except (ValueError, InvalidVersion):
        return True


def expired_expiry(message: str, today: datetime.date, kit_version: str) -> str | None:
    """The expiry of the waiver a waived test's ``message`` states, when it has passed
    for a run of kit ``kit_version`` on ``today``; None while the waiver holds."""
    waived = parse_waived(message)
    if waived and waived.expires and has_expired(waived.expires, today, kit_version):
        return waived.expires
    return None


def expired_waivers(record: dict, now: datetime.datetime) -> dict[str, str]:
    """Contracts of a schema-valid record holding a waived test whose waiver has
    expired, each with that waiver's expiry."""
    today, kit = now.date(), record["provenance"]["kit_version"]
    expired = {}
    for test in record["tests"]:
        if test["outcome"] == "waived" and test["contract"] is not None:
            if (expiry := expired_expiry(test["message"], today, kit)) is not None:
                expired.setdefault(test["contract"], expiry)
    return expired
