"""Shards: one run's tests split over N jobs, and their records merged back into one.

``conformance run --shard K/N`` runs the tests whose node id hashes to shard K of N
(1-based). The rule reads the node id only, never the rest of the collection, so
every job puts a test in the same shard even if the jobs collected in another order.
The shard a record holds is read from its own command line (``provenance.command_line``),
so nothing outside the record has to say which shard it is.

``merge`` makes one record from one shard record per index: the tests of all, the
roll-ups recomputed, ``provenance.shards`` naming each shard's file and job. A shard
that is absent or did not finish leaves the merged record incomplete, so ``conformance
verify`` says INCOMPLETE, never CONFORMANT. Torch-free, like the rest of ``results``.
"""

from __future__ import annotations

import copy
import hashlib
import re

from conformance.results import outcomes
from conformance.results.record import coverage_fields, roll_up_contracts

SHARD_PATTERN = re.compile(r"([1-9][0-9]{0,3})/([1-9][0-9]{0,3})")
SHARD_OPTION = "--shard"


class ShardError(ValueError):
    """A shard spec or a set of shard records that cannot be used; one line."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as (K, N), 1 <= K <= N."""
    match = SHARD_PATTERN.fullmatch(text)
    if not match or int(match.group(1)) > int(match.group(2)):
        raise ShardError(f"--shard {text!r} must be K/N with 1 <= K <= N <= 9999, e.g. 1/2")
    return int(match.group(1)), int(match.group(2))


def shard_of(nodeid: str, count: int) -> int:
    """The shard (1-based) of ``count`` that runs the test ``nodeid``."""
    digest = hashlib.sha256(nodeid.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_in_command_line(command_line: list[str]) -> tuple[int, int] | None:
    """The ``--shard K/N`` of a recorded command line, or None for an unsharded run."""
    for index, argument in enumerate(command_line):
        if argument == SHARD_OPTION and index + 1 < len(command_line):
            return parse_shard(command_line[index + 1])
        if argument.startswith(SHARD_OPTION + "="):
            return parse_shard(argument.split("=", 1)[1])
    return None


#: Provenance that must be the same in every shard of one run: else the shards
#: tested different things and their union proves nothing.
SAME_IN_EVERY_SHARD = ("kit_version", "contract_version", "suite_hash", "plugin",
                       "mustpass_profile")


def _shard_entry(index: int, name: str, record: dict) -> dict:
    """What the merged record says of one shard: its file; the job, attempt and agent
    that ran it when CI recorded them; and that agent's pre-flight, since the merged
    ``provenance.device`` is the first shard's and each shard may have run on
    another machine."""
    provenance = record["provenance"]
    ci = provenance.get("ci", {})
    entry = {"index": index, "file": name,
             **{field: ci[field] for field in ("job_id", "retry_count", "agent_name")
                if field in ci}}
    if "preflight" in provenance["device"]:
        entry["preflight"] = provenance["device"]["preflight"]
    return entry


def merge(shards: dict[int, tuple[str, dict]], count: int) -> dict:
    """One record from ``shards`` (index -> (file name, record)) of a run split in
    ``count``; each record must already be known to read as a record."""
    if not shards:
        raise ShardError("no shard record to merge")
    indexes = sorted(shards)
    first_name, first = shards[indexes[0]]
    for index in indexes[1:]:
        name, record = shards[index]
        for field in SAME_IN_EVERY_SHARD:
            if record["provenance"].get(field) != first["provenance"].get(field):
                raise ShardError(f"shard {index}/{count} ({name}) differs from shard "
                                 f"{indexes[0]}/{count} ({first_name}) in provenance.{field}")
    missing = [index for index in range(1, count + 1) if index not in shards]
    records = [shards[index][1] for index in indexes]
    complete = not missing and all(record["complete"] for record in records)
    tests = [test for record in records for test in record["tests"]]
    provenance = copy.deepcopy(first["provenance"])
    provenance["started_at"] = min(r["provenance"]["started_at"] for r in records)
    provenance["finished_at"] = (max(r["provenance"]["finished_at"] for r in records)
                                 if complete else None)
    provenance["shards"] = {
        "count": count,
        "records": [_shard_entry(index, *shards[index]) for index in indexes],
        "missing": missing,
    }
    merged = {
        "schema_version": first["schema_version"],
        "complete": complete,
        "exit_status": max(r["exit_status"] for r in records) if complete else None,
        "provenance": provenance,
        "tests": tests,
        "contracts": roll_up_contracts(tests),
        "summary": outcomes.count(test["outcome"] for test in tests),
    }
    if "capability_coverage" in first:
        merged.update(coverage_fields(tests, provenance["device"].get("capabilities")))
    return merged
