"""A plugin's own expectations file: known failures it waives, each with a reason.

The file belongs to the plugin, not to the kit (TOML)::

    [[waive]]
    id = "attention.forward.sliding_window"     # a contract id or a prefix of one,
    reason = "window > 4096 miscomputes on firmware 1.2"   # or a test node id
    link = "https://github.com/vendor/plugin/issues/12"

A test matching an entry that fails, errors, crashes or times out is recorded as
``waived`` with the reason and link, never as passed. A matching test that passes is
an unexpected pass: a warning, or a failure under ``--strict-expectations``. Entries
that match no collected test are warned about, since they hide nothing any more.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

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

    def matches(self, nodeid: str, contract: str | None) -> bool:
        if contract is not None and (contract == self.id or contract.startswith(self.id + ".")):
            return True
        return nodeid == self.id or nodeid.startswith((self.id + "::", self.id + "["))

    def describe(self) -> str:
        return f"{self.reason} ({self.link})"


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
        extra = set(entry) - {"id", "reason", "link"}
        if extra:
            raise ExpectationsError(f"{where}: unknown key(s) {sorted(extra)}")
        waivers.append(Waiver(entry["id"].strip(), entry["reason"].strip(), entry["link"].strip()))
    return waivers


def waiver_for(waivers: list[Waiver], nodeid: str, contract: str | None) -> Waiver | None:
    return next((w for w in waivers if w.matches(nodeid, contract)), None)
