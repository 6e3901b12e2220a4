"""From record files to the ``Matrix``: the one data model every output renders.

Records are judged and kept in the index (``index``): a build with an index file
judges only new or changed files; without one it uses an index in memory.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import json
import os
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from conformance.matrix import capabilities, codec, drilldown, grid, history, overview, standing
from conformance.matrix.collector import collection_paused
from conformance.matrix.diff_data import runs_script
from conformance.matrix.index import Judging, RecordIndex
from conformance.matrix.kits import KnownKits, known_kits
from conformance.matrix.model import Column, Generated, History, Matrix, OverviewHeading
from conformance.matrix.presentation import natural_key
from conformance.matrix.sources import Accepted
from conformance.results.verify import load_mustpass

GENERATOR = "conformance matrix build"


@dataclasses.dataclass(frozen=True)
class Built:
    matrix: Matrix
    records: list[Accepted]  # what the matrix shows, one per content
    copies: dict[str, tuple[Path, str]]  # site-relative path -> (record file, its sha256)
    judged: int  # record files judged by this build; the others were read from the index
    run_scripts: dict[str, str]  # column id -> its runs for the diff page (``diff_data``)
    #: Column id -> its platform's file (``platform_data``), of the lines this build
    #: made; the others' are kept in the index.
    platform_files: dict[str, str]
    #: Columns read from the index as outlines (``codec.outline``): their platform's
    #: own page and file are the kept ones, or made from the index's whole model.
    outlined: frozenset[str]
    #: Column id -> a digest of everything its platform's files are made from: a file
    #: made with the same key is the same, and is reused from the previous site.
    line_keys: dict[str, str]
    index: Path | None  # the index file kept between builds, if any


@collection_paused()
def build_matrix(paths: Iterable[str | os.PathLike], *, now: datetime.datetime | None = None,
                 stale_days: int = 30, window: int = 10, kits: KnownKits | None = None,
                 mustpass: dict[str, str] | None = None, allow_unreleased: bool = False,
                 index: str | os.PathLike | None = None) -> Built:
    """The matrix of the records under ``paths`` (files or folders).

    ``now`` is the verifying clock (no record may lie ahead of it) and the staleness
    reference; ``window`` is how many of a platform line's latest comparable records
    its transitions and flakiness look at; ``kits`` and ``mustpass`` (the kit's contracts:
    the rows, and the only ids its records may name) default to the
    installed kit's and exist so tests and benchmarks can describe other kits;
    ``allow_unreleased`` shows records of kits not released, and the page says so;
    ``index`` is the index file to keep (None: one in memory, for this build only).
    """
    now = now or datetime.datetime.now(datetime.timezone.utc)
    kits = kits or known_kits()
    mustpass = load_mustpass() if mustpass is None else mustpass
    with RecordIndex(index if index is not None else ":memory:") as records_index:
        records, rejected = records_index.ingest(
            paths, Judging(kits, now, allow_unreleased, frozenset(mustpass)))
        lines: dict[tuple[str, str, str], list[Accepted]] = {}
        for record in sorted(records, key=lambda r: (r.started, str(r.path))):
            lines.setdefault(record.line, []).append(record)
        href = {r.path: _copy_name(r) for r in records}
        contracts = grid.contract_rows(mustpass, records_index.unlisted_contracts())
        contract_ids = [c.id for c in contracts]
        # In natural order (vendor2 before vendor10): by plugin, then device, then distribution.
        ordered = sorted(lines, key=lambda line: [natural_key(name) for name in (line[1], line[2], line[0])])
        stale = {line: grid.staleness(lines[line][-1], now, stale_days, kits.installed.contract_version)
                 for line in ordered}
        # Digested once: the contracts' rules are most of it, and every line's key holds it.
        common = hashlib.sha256(json.dumps([renderer_digest(), window, [(c.id, c.rule, c.required)
                                                                         for c in contracts]]).encode()).hexdigest()
        keys = {grid.column_id(*line): _line_key(lines[line], stale[line], now, common) for line in ordered}
        cached = records_index.cached_outlines(records_index.cached_lines(keys))
        records_index.load_extras([lines[line][-1] for line in ordered if grid.column_id(*line) not in cached])

        columns, histories, capability_cells, run_scripts, platform_files = [], [], [], {}, {}
        for line in ordered:
            runs, column_id = lines[line], grid.column_id(*line)
            if column_id in cached:
                outline, run_scripts[column_id] = cached[column_id]
                column, line_history = codec.column_from(outline["column"]), codec.history_from(outline["history"])
                line_capabilities = codec.capability_cells_from(outline["capabilities"])
            else:
                # Outcomes of the line's compared window and newest record, and the newest
                # one's tests, are read for this line only, and let go once it is built.
                diffed = history.compared(runs)[-window:]
                shown = list({r.digest: r for r in [*diffed, runs[-1]]}.values())
                records_index.load(shown, with_tests=[runs[-1].digest])
                line_history = history.build_history(column_id, runs, contract_ids, href, window,
                                                     _telling(records_index.not_passed([r.digest for r in diffed])))
                column = grid.build_column(runs[-1], contracts, href[runs[-1].path], history.regressions(diffed),
                                           line_history.flaky, stale[line], now, _unreleased(runs[-1]))
                for record in shown:
                    del record.data["contracts"], record.data["tests"]
                line_capabilities = capabilities.line_cells(column, runs[-1])
                outcomes = records_index.outcomes([r.digest for r in runs])
                run_scripts[column_id] = runs_script(line_history, {d[:12]: o for d, o in outcomes.items()})
                platform_files[column_id] = platform_data(column, line_history)
                records_index.keep_line(column_id, keys[column_id], platform_files[column_id],
                                        json.dumps({"column": codec.outline_data(column),
                                                    "history": codec.to_data(codec.history_outline(line_history)),
                                                    "capabilities": codec.to_data(line_capabilities)}),
                                        run_scripts[column_id])
            columns.append(column)
            histories.append(line_history)
            capability_cells.append(line_capabilities)
        records_index.forget_lines_but(keys)
        judged = records_index.judged
        tier = standing.line_tiers(records, records_index, kits, now)

    at = now.isoformat(timespec="seconds")
    generated = Generated(
        by=GENERATOR, records=len(records), at=at,
        note=f"generated by `{GENERATOR}` from {len(records)} records at {at} — do not edit")
    fields = overview.overview_columns(list(dict.fromkeys(c.suite for c in contracts)), tier)
    matrix = Matrix(
        generated=generated,
        kit_version=kits.installed.version,
        contract_version=kits.installed.contract_version,
        stale_days=stale_days,
        stale_rule=stale_rule(stale_days, now, kits.installed.contract_version),
        unreleased_note=_unreleased_note(allow_unreleased, columns),
        window=window,
        contracts=contracts,
        overview_columns=[OverviewHeading(f.key, f.heading, f.explanation) for f in fields],
        overview=overview.overview_rows(columns, fields),
        columns=columns,
        capabilities=capabilities.capability_rows([c.id for c in columns], capability_cells),
        histories=histories,
        rejected=rejected,
    )
    return Built(matrix, records, {href[r.path]: (r.path, r.digest) for r in records}, judged,
                 run_scripts, platform_files, frozenset(cached), keys, Path(index) if index is not None else None)


def platform_data(column: Column, line_history: History) -> str:
    """A platform's file, ``platforms/ID.json``: its column and its history. Compact:
    indenting takes ``json``'s pure-Python encoder, several times slower than its C one,
    and a build of 10,000 records writes 500 of these files."""
    return json.dumps({"column": codec.to_data(column), "history": codec.to_data(line_history)},
                      ensure_ascii=False, separators=(",", ":")) + "\n"


@functools.cache
def renderer_digest() -> str:
    """A digest of the code and templates that make the model and the pages: a
    platform line's cached model and files are reused only when they are unchanged."""
    package = resources.files("conformance.matrix")
    digest = hashlib.sha256()
    for folder in (package, package / "templates"):
        for item in sorted(folder.iterdir(), key=lambda i: i.name):
            if item.name.endswith((".py", ".j2")):
                digest.update(item.name.encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()


def _line_key(runs: list[Accepted], stale: str | None, now: datetime.datetime, common: str) -> str:
    """What a platform line's model and pages are made from: its records and how each
    was judged, its staleness, the day when a waiver of it may expire, and ``common``
    (the digest of what every line's are made from)."""
    waived = any(r.data["summary"].get("waived") for r in runs)
    judged = [(str(r.path), r.digest, r.verdict_line, r.trust.level, r.trust.signer, r.trust.key, r.released)
              for r in runs]
    text = json.dumps([common, stale, now.date().isoformat() if waived else None, judged])
    return hashlib.sha256(text.encode()).hexdigest()


def _telling(not_passed: dict[str, list[tuple[str, str, str]]]) -> history.MessageOf:
    """What says why a record's contract ended as it did: the assertion line of its
    first test that ended so, from the records' tests that did not pass."""
    first: dict[tuple[str, str, str], str] = {}
    for digest, tests in not_passed.items():
        for contract, outcome, message in tests:
            first.setdefault((digest, contract, outcome), message)

    def message_of(record: Accepted, contract: str) -> str:
        outcome = record.data["contracts"][contract]["outcome"]
        return drilldown.assertion(first.get((record.digest, contract, outcome), ""))

    return message_of


def stale_rule(stale_days: int, now: datetime.datetime, contract_version: str) -> str:
    cutoff = (now - datetime.timedelta(days=stale_days)).date().isoformat()
    return (f"A column is stale when its newest record is older than {stale_days} days "
            f"(started before {cutoff}) or was made by a contract version older than this "
            f"kit's ({contract_version}); a stale column says when, and on which kit, it "
            "was last verified.")


def _unreleased(record: Accepted) -> str | None:
    return None if record.released else f"kit {record.provenance['kit_version']} is not released"


def _unreleased_note(allowed: bool, columns: list) -> str | None:
    if not allowed:
        return None
    shown = sum(1 for c in columns if c.unreleased)
    return (f"Built with --allow-unreleased: records of kits that are not released are "
            f"shown; {shown} of {len(columns)} columns come from one, each marked "
            "\"unreleased kit\". A published matrix is built without it.")


def _copy_name(record: Accepted) -> str:
    stamp = record.started.astimezone(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"records/{grid.column_id(*record.line)}/{stamp}-{record.digest[:12]}.record.json"
