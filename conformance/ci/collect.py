"""Which record speaks for a device: the latest attempt of each shard, merged.

A device's folder of downloaded artifacts can hold several records: a retried job
leaves one per attempt, a sharded step one per shard. The attempt is told by the
record itself: first by its retry count (``provenance.ci.retry_count``, which CI
counts and no agent's clock can skew), then by its own ``provenance.started_at``;
never by the file's mtime, which says only in what order the files were downloaded.
The shard is told by the record's own command line.
A file that cannot be read as a record is no attempt anyone can place: it speaks for
the device only when nothing readable does (and then the verdict is INVALID).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from conformance.results import reading
from conformance.results.sharding import ShardError, merge, shard_in_command_line

RECORD_SUFFIX = ".record.json"


@dataclasses.dataclass(frozen=True)
class Attempt:
    path: Path
    record: dict | None  # None: unreadable, or without the fields that place it
    started_at: str = ""
    shard: tuple[int, int] | None = None
    retry_count: int = -1  # -1: made outside CI, before any attempt CI counted


@dataclasses.dataclass(frozen=True)
class Collected:
    """What speaks for one device: a record (merged, for shards) or a file to judge."""

    source: str  # what the verdict line names
    record: dict | None = None
    path: Path | None = None  # the file itself, when it is one attempt
    ignored: tuple[str, ...] = ()  # earlier attempts and unreadable files, by name
    error: str | None = None  # records that cannot be put together: INVALID


def _attempt(path: Path) -> Attempt:
    try:
        _, record = reading.read_record(path)
        provenance = record["provenance"]
        started_at = provenance["started_at"]
        shard = shard_in_command_line(provenance["command_line"])
        if reading.schema_problems(record):
            raise TypeError  # off the schema: its fields cannot place it either
    except (reading.UnreadableRecord, ShardError, KeyError, TypeError):
        return Attempt(path, None)
    retry_count = provenance.get("ci", {}).get("retry_count", -1)
    return Attempt(path, record, started_at, shard, retry_count)


def attempts(folder: Path) -> list[Attempt]:
    files = sorted(folder.glob(f"*{RECORD_SUFFIX}")) if folder.is_dir() else []
    return [_attempt(path) for path in files]


def _latest(found: list[Attempt]) -> Attempt:
    # The retry count first: a retry on an agent whose clock runs behind is still
    # the later attempt. Then the start time (ISO 8601 UTC strings of one format
    # sort as times); the name breaks a tie the same way on every machine.
    return max(found, key=lambda a: (a.retry_count, a.started_at, a.path.name))


def collect(folder: Path) -> Collected | None:
    """What speaks for the device whose records are in ``folder`` (None: no file)."""
    found = attempts(folder)
    if not found:
        return None
    readable = [a for a in found if a.record is not None]
    if not readable:
        first = found[0]
        return Collected(str(first.path), path=first.path,
                         ignored=tuple(a.path.name for a in found[1:]))
    shapes = {a.shard[1] if a.shard else None for a in readable}
    if len(shapes) > 1:
        described = ", ".join("unsharded" if n is None else f"{n} shards"
                              for n in sorted(shapes, key=lambda n: n or 0))
        return Collected(str(folder), error=f"records of one device from runs split "
                         f"differently ({described}): remove the stale ones")
    (count,) = shapes
    if count is None:
        chosen = _latest(readable)
        return Collected(str(chosen.path), chosen.record, chosen.path,
                         tuple(a.path.name for a in found if a is not chosen))
    by_shard: dict[int, list[Attempt]] = {}
    for attempt in readable:
        by_shard.setdefault(attempt.shard[0], []).append(attempt)
    chosen = {index: _latest(group) for index, group in by_shard.items()}
    kept = {a.path for a in chosen.values()}
    ignored = tuple(a.path.name for a in found if a.path not in kept)
    source = f"{folder} ({len(chosen)} of {count} shards merged)"
    try:
        merged = merge({index: (a.path.name, a.record) for index, a in chosen.items()}, count)
    except ShardError as exc:
        return Collected(source, ignored=ignored, error=str(exc))
    return Collected(source, merged, ignored=ignored)


def write_collected(collected: Collected, target: Path) -> None:
    """Write what speaks for a device to ``target`` (atomically), for the matrix."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    if collected.path is not None:
        temporary.write_bytes(collected.path.read_bytes())
    else:
        temporary.write_text(json.dumps(collected.record, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, target)
