"""A record's timestamps, read strictly: RFC 3339, with a zone, in order, not ahead.

The schema's ``date-time`` format is only an annotation to a JSON Schema validator,
so the record's times are checked here. ``datetime.fromisoformat`` alone is too lenient
(it takes ``2026-11-20`` and zone-less times), so the text must first match RFC 3339's
``date-time`` production; the parser then rejects impossible dates such as February 30.
A time later than the verifying clock plus ``MAX_CLOCK_SKEW`` is refused: a record from
the future would otherwise become a platform's newest and hide its real latest run.
"""

from __future__ import annotations

import datetime
import re

#: How far a record's time may lie ahead of the verifying machine's clock: clocks of
#: the machines that run the kit and of the one that verifies disagree a little.
MAX_CLOCK_SKEW = datetime.timedelta(minutes=5)

_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)

#: Where a record holds a time: (path shown in messages, getter). ``finished_at`` is
#: null until the run ends.
_FIELDS = (
    ("provenance/started_at", lambda r: r["provenance"]["started_at"]),
    ("provenance/finished_at", lambda r: r["provenance"]["finished_at"]),
    ("performance/measured_at", lambda r: r.get("performance", {}).get("measured_at")),
)


class BadTimestamp(ValueError):
    """The text is not an RFC 3339 time with a zone; the message says so."""


def parse_timestamp(text: object) -> datetime.datetime:
    """The aware datetime that ``text`` names, or ``BadTimestamp``."""
    if not isinstance(text, str) or not _RFC3339.fullmatch(text):
        raise BadTimestamp(f"{_shown(text)} is not an RFC 3339 time with a zone "
                           "(such as 2026-11-20T10:00:00+00:00)")
    # Python 3.10's fromisoformat takes no "Z", and fractions of 3 or 6 digits only:
    # every fraction becomes 6 digits (nanoseconds are cut, as datetime holds micro).
    normal = re.sub(r"\.(\d+)", lambda m: "." + (m[1] + "00000")[:6],
                    text[:10] + "T" + text[11:]).upper().replace("Z", "+00:00")
    try:
        return datetime.datetime.fromisoformat(normal)
    except ValueError as exc:
        raise BadTimestamp(f"{_shown(text)} is not a real time ({exc})") from None


def time_problems(record: dict, now: datetime.datetime | None = None) -> list[str]:
    """One line per bad time in a record that matches the schema: unparseable or
    zone-less, finished before started, later than ``now`` (the verifying clock)
    plus ``MAX_CLOCK_SKEW``, or missing at the end of a finished run."""
    latest = (now or datetime.datetime.now(datetime.timezone.utc)) + MAX_CLOCK_SKEW
    problems, parsed = [], {}
    for field, get in _FIELDS:
        text = get(record)
        if text is None:
            continue
        try:
            parsed[field] = moment = parse_timestamp(text)
        except BadTimestamp as exc:
            problems.append(f"{field}: {exc}")
            continue
        if moment > latest:
            problems.append(f"{field}: {text} is in the future (the verifying clock says "
                            f"{(latest - MAX_CLOCK_SKEW).astimezone(datetime.timezone.utc):%Y-%m-%dT%H:%M:%SZ}, allowing "
                            f"{MAX_CLOCK_SKEW.total_seconds() / 60:.0f} minutes of clock skew)")
    started, finished = parsed.get("provenance/started_at"), parsed.get("provenance/finished_at")
    if started and finished and finished < started:
        problems.append(f"provenance/finished_at: {record['provenance']['finished_at']} is "
                        f"before started_at {record['provenance']['started_at']}")
    if record["complete"] and record["provenance"]["finished_at"] is None:
        problems.append("provenance/finished_at: a finished run (complete: true) must say when it finished")
    return problems


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
