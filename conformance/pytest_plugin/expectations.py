"""A plugin's own expectations file: known failures it waives, each with a reason.

The file belongs to the plugin, not to the kit (TOML)::

    [[waive]]
    id = "attention.forward.sliding_window"     # a contract id or a prefix of one,
    reason = "window > 4096 miscomputes on firmware 1.2"   # or a test node id
    link = "https://github.com/vendor/plugin/issues/12"
    expires = 2027-03-31          # optional: the last day it applies (a TOML date),
                                  # or a kit version ("0.2.0") from which it no longer does

A waiver is an exception with an end, as Kubernetes' conformance exceptions are: past
its expiry it no longer applies, so the failure counts. The record words a waived
test's message with the expiry (``conformance.results.waivers``), so a waiver that
expires after the run counts as a failure when the record is verified then.

A test matching an entry that fails, errors, crashes or times out is recorded as
``waived`` with the reason and link, never as passed. A matching test that passes is
an unexpected pass: a warning, or a failure under ``--strict-expectations``. Entries
that match no collected test are warned about, since they hide nothing any more.
"""

from __future__ import annotations

import dataclasses
import datetime
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from conformance._version import __version__
from conformance.results import waivers as waiver_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


class ExpectationsError(ValueError):
    """The expectations file is unreadable or malformed (one-line message)."""


@dataclasses.dataclass(frozen=True)
class Waiver:
    id: str
    reason: str
    link: str
    expires: datetime.date | str | None = None  # a last day, or the kit version it ends at

    def matches(self, nodeid: str, contract: str | None) -> bool:
        if contract is not None and (contract == self.id or contract.startswith(self.id + ".")):
            return True
        return nodeid == self.id or nodeid.startswith((self.id + "::", self.id + "["))

    def describe(self) -> str:
        expires = waiver_text.expiry_text(self.expires) if self.expires is not None else None
        return waiver_text.describe(self.reason, self.link, expires)

    def has_expired(self, today: datetime.date, kit_version: str) -> bool:
        if self.expires is None:
            return False
        return waiver_text.has_expired(waiver_text.expiry_text(self.expires), today, kit_version)


def load_expectations(path: str | Path) -> list[Waiver]:
    """The waivers in ``path``; every problem is a one-line ``ExpectationsError``
    naming the file and the entry."""
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExpectationsError(f"cannot read expectations file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationsError(f"expectations file {path} is not valid TOML: {exc}") from None
    unknown = set(document) - {"waive"}
    if unknown:
        raise ExpectationsError(f"expectations file {path}: unknown table(s) {sorted(unknown)}; "
                                "only [[waive]] entries are allowed")
    waivers = []
    for index, entry in enumerate(document.get("waive", []), start=1):
        where = f"expectations file {path}, waive entry {index}"
        if not isinstance(entry, dict):
            raise ExpectationsError(f"{where}: must be a table")
        for key in ("id", "reason", "link"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise ExpectationsError(f"{where}: needs a non-empty {key!r}")
        if not entry["link"].startswith(("https://", "http://")):
            raise ExpectationsError(f"{where}: link {entry['link']!r} is not an http(s) URL")
        extra = set(entry) - {"id", "reason", "link", "expires"}
        if extra:
            raise ExpectationsError(f"{where}: unknown key(s) {sorted(extra)}")
        waivers.append(Waiver(entry["id"].strip(), entry["reason"].strip(), entry["link"].strip(),
                              _expiry(entry.get("expires"), where)))
    return waivers


def _expiry(value: object, where: str) -> datetime.date | str | None:
    """An entry's ``expires``: a TOML date (or ``"YYYY-MM-DD"``), or a kit version."""
    if value is None or (isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)):
        return value
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            pass
        try:
            return str(Version(value))
        except InvalidVersion:
            pass
    raise ExpectationsError(f"{where}: expires {value!r} is neither a date (2027-03-31) "
                            "nor a kit version (\"0.2.0\")")


def waiver_for(waivers: list[Waiver], nodeid: str, contract: str | None,
               today: datetime.date | None = None, kit_version: str = __version__) -> Waiver | None:
    """The first waiver that matches and has not expired (today, for this kit)."""
    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    return next((w for w in waivers
                 if w.matches(nodeid, contract) and not w.has_expired(today, kit_version)), None)
