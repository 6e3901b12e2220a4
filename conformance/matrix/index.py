"""The index of records: an SQLite file caching what each record file was judged to be.

``conformance matrix build`` reads a records folder that grows by a record per device
per nightly run; judging a record (schema, names, times, kit, roll-ups, signature) is
most of a build's time, so each file is judged once and the outcome kept here, keyed
by the file (path, size, modification time, and the digest of the keyrings that
judged it) and by its content (sha256). A build judges only new or changed files and
renders from queries on the index.

The index is a cache, never a source: deleting it rebuilds the same site from the
records. It is dropped whole when what judged its rows changes (the installed kit,
the released kits, the contract ids, ``--allow-unreleased``); a file is judged again
when the verifying clock is earlier than when it was judged (a record may not lie
ahead of the clock), on a new day when it holds a dated waiver (which may have
expired), and, when it was rejected, on every build (a rejection is cheap and rare).

The schema and queries are portable SQL (no SQLite-only types or functions; ``?``
parameters, as DB-API's ``qmark`` style), so a deployment that outgrows one file can
create the same tables on a server database (docs/matrix.md says how).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import hashlib
import json
import operator
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from conformance.matrix.kits import KnownKits
from conformance.matrix.model import Rejection
from conformance.matrix.sources import (
    RECORD_SUFFIX,
    Accepted,
    RecordRejected,
    judge,
    keyring_files,
    record_files,
)
from conformance.results import signing, waivers

#: Bumped when a table changes: an index of another format is dropped and rebuilt.
INDEX_FORMAT = "7"

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS index_meta (name VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL)",
    # One row per record file of the last build: how it was judged, and by what.
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, within_folder TEXT NOT NULL,"
    " size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, keyrings CHAR(64) NOT NULL,"
    " judged_at VARCHAR(40) NOT NULL, dated_waivers INTEGER NOT NULL, digest CHAR(64),"
    " verdict TEXT, verdict_line TEXT, trust_level VARCHAR(20), trust_signer TEXT,"
    " trust_key TEXT, released INTEGER, rejection TEXT)",
    # One row per accepted content: what every build reads of it. ``unlisted_contracts``
    # is a JSON list of the contract ids it names that the judging kit does not list
    # (an earlier release's): the grid's rows beyond the mustpass list.
    "CREATE TABLE IF NOT EXISTS records (digest CHAR(64) PRIMARY KEY, distribution TEXT NOT NULL,"
    " plugin TEXT NOT NULL, device TEXT NOT NULL, started_utc VARCHAR(40) NOT NULL,"
    " contract_version TEXT NOT NULL, complete INTEGER NOT NULL, provenance TEXT NOT NULL,"
    " summary TEXT NOT NULL, unlisted_contracts TEXT NOT NULL)",
    # A record's capability coverage and performance figures (a JSON object), which only
    # a line's newest record's page reads: about 20 kB a record, which in ``records``
    # made every build read 200 MB of 10,000 records' rows from disk to reach 1 kB of each.
    "CREATE TABLE IF NOT EXISTS record_extras (digest CHAR(64) PRIMARY KEY, extras TEXT NOT NULL)",
    # A record's contract outcomes (a JSON object: contract id -> outcome) with the tests
    # that did not pass (a JSON list of [contract, outcome, message]: what a history's
    # changes and a waiver's expiry read), and its tests (a JSON list of [nodeid,
    # contract, outcome, duration, message]: what the cells of a line's newest record
    # show), each in the record's order and one row per record: storing a row per
    # contract and per test was most of the time of judging 10,000 records.
    "CREATE TABLE IF NOT EXISTS record_outcomes (digest CHAR(64) PRIMARY KEY, outcomes TEXT NOT NULL,"
    " not_passed TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS record_tests (digest CHAR(64) PRIMARY KEY, tests TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS records_by_line ON records (distribution, plugin, device, started_utc)",
    # ``unlisted_contracts`` is read on every build, and reaching the last column of
    # 10,000 rows of records walks each row's overflow pages: the index answers alone.
    "CREATE INDEX IF NOT EXISTS records_by_unlisted ON records (unlisted_contracts)",
    # Per platform line, the model and diff data last made, under the key of what made them.
    # ``outline`` is the model without what only the platform's own files show (the
    # cells' messages and tests): what the other pages read of an unchanged line.
    # ``model``, the largest, is the last column: a row's outline is read without
    # reading its pages (a row's columns lie in order, a long one on pages of its own).
    "CREATE TABLE IF NOT EXISTS line_cache (column_id VARCHAR(64) PRIMARY KEY, line_key CHAR(64) NOT NULL,"
    " outline TEXT NOT NULL, runs_script TEXT NOT NULL, model TEXT NOT NULL)",
    # What the last build wrote into each site: a file with the same key, and the size
    # and modification time it was written with, is reused.
    "CREATE TABLE IF NOT EXISTS site_files (site TEXT NOT NULL, path TEXT NOT NULL,"
    " file_key CHAR(64) NOT NULL, sha256 CHAR(64) NOT NULL, size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL,"
    " PRIMARY KEY (site, path))",
)
_TABLES = ("files", "records", "record_extras", "record_outcomes", "record_tests", "line_cache", "site_files")
#: Tables of earlier formats, dropped with a stale index so their rows do not linger.
_RETIRED_TABLES = ("contract_outcomes", "tests", "named_contracts")
#: The record's sections other than those with tables of their own, kept whole.
_EXTRAS = ("capability_coverage", "capability_config_checked", "performance")
#: The fields of a test the index keeps, in the order of ``record_tests``' lists.
_TEST_FIELDS = ("nodeid", "contract", "outcome", "duration", "message")
_TEST_ROW = operator.itemgetter(*_TEST_FIELDS)
#: Below this many files to judge, a pool of processes costs more than it saves.
_POOL_FROM = 64


def default_index_path(site: str | os.PathLike) -> Path:
    """Where ``conformance matrix build -o SITE`` keeps its index: beside the site,
    never inside it (the site folder is replaced whole on every build)."""
    site = Path(site)
    return site.with_name(f".{site.name}.index.sqlite")


class SiteFile(NamedTuple):
    """A file a build wrote into a site, as it wrote it."""

    key: str | None  # what it was made from (``render_html.Page``)
    sha256: str
    size: int
    mtime_ns: int


@dataclasses.dataclass(frozen=True)
class Judging:
    """What a file is judged by, besides the file itself."""

    kits: KnownKits
    now: datetime.datetime
    allow_unreleased: bool
    contracts: frozenset[str]

    def context(self) -> str:
        """A digest of everything that judged the index's rows but the clock."""
        kits = [self.kits.installed, *self.kits.released]
        text = json.dumps([INDEX_FORMAT, [(k.version, k.contract_version, k.suite_hash, sorted(k.contracts))
                                          for k in kits], sorted(self.contracts), self.allow_unreleased])
        return hashlib.sha256(text.encode()).hexdigest()


class RecordIndex:
    """An open index; ``ingest`` brings it up to date with the record files."""

    def __init__(self, path: str | os.PathLike = ":memory:") -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path))
        # A cache: after a crash it is rebuilt from the records, so it skips the
        # per-commit flush to disk (SQLite's own setting; nothing a query depends on).
        self.db.execute("PRAGMA synchronous = OFF")
        self.judged = 0  # files the last ``ingest`` judged (the rest came from the index)
        self._create_tables()

    def _create_tables(self) -> None:
        for statement in SCHEMA:
            self.db.execute(statement)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> RecordIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ingest(self, paths: Iterable[str | os.PathLike], judging: Judging) -> tuple[list[Accepted], list[Rejection]]:
        """The accepted records under ``paths`` (provenance and summary only: ``load``
        and ``load_extras`` fill in the rest) and the rejected files, judging only what
        changed."""
        self._drop_if_stale(judging.context())
        found = record_files(paths)
        rejected = list(found.missing)
        rejected += [Rejection(str(path), f"named like a record but not *{RECORD_SUFFIX}: rename it "
                                          f"to end in {RECORD_SUFFIX}, or move it out")
                     for path in found.misnamed]
        known = {row[0]: row for row in self.db.execute(
            "SELECT path, within_folder, size, mtime_ns, keyrings, judged_at, dated_waivers FROM files"
            " WHERE rejection IS NULL")}
        now = _utc(judging.now)
        keyring_digests: dict[tuple[str, Path | None], str] = {}
        stamps, to_judge = {}, []
        for path, within in found.records:
            stamp = _stamp(path, within, keyring_digests)
            stamps[str(path)] = stamp
            row = known.get(str(path))
            if row is None or row[1:5] != stamp or row[5] > now or (row[6] and row[5][:10] != now[:10]):
                to_judge.append((path, within))
        self.judged = len(to_judge)
        with self.db:
            # Removed files, and changed ones (judged again below): their contents may be no one's now.
            gone = [(p,) for p in set(known) - set(stamps)] + [(str(p),) for p, _ in to_judge if str(p) in known]
            self.db.executemany("DELETE FROM files WHERE path = ?", gone + [(str(p),) for p, _ in to_judge])
            self.db.execute("DELETE FROM files WHERE rejection IS NOT NULL")
            stored = {row[0] for row in self.db.execute("SELECT digest FROM records")}
            for path, result in _judge_all(to_judge, judging):
                self._store(path, stamps[str(path)], now, result, stored)
            if gone:
                self._forget_unreferenced()
        rejected += [Rejection(path, reason) for path, reason in self.db.execute(
            "SELECT path, rejection FROM files WHERE rejection IS NOT NULL ORDER BY path")]
        return self._accepted(), rejected

    def _drop_if_stale(self, context: str) -> None:
        row = self.db.execute("SELECT value FROM index_meta WHERE name = 'context'").fetchone()
        if row and row[0] == context:
            return
        with self.db:
            # Dropped, not emptied: an index of another format has other columns.
            for table in (*_TABLES, *_RETIRED_TABLES):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self._create_tables()
            self.db.execute("DELETE FROM index_meta WHERE name = 'context'")
            self.db.execute("INSERT INTO index_meta (name, value) VALUES ('context', ?)", (context,))

    def _store(self, path: Path, stamp: tuple, now: str, result: tuple, stored: set[str]) -> None:
        verdict, rows = result
        if isinstance(verdict, Rejection):
            self.db.execute("INSERT INTO files (path, within_folder, size, mtime_ns, keyrings, judged_at,"
                            " dated_waivers, rejection) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
                            (str(path), *stamp, now, verdict.reason))
            return
        digest, dated, file_verdict = verdict
        self.db.execute("INSERT INTO files (path, within_folder, size, mtime_ns, keyrings, judged_at,"
                        " dated_waivers, digest, verdict, verdict_line, trust_level, trust_signer,"
                        " trust_key, released) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (str(path), *stamp, now, dated, digest, *file_verdict))
        if digest in stored:
            return
        stored.add(digest)
        record_row, extras, outcomes, not_passed, tests = rows
        self.db.execute("INSERT INTO records (digest, distribution, plugin, device, started_utc,"
                        " contract_version, complete, provenance, summary, unlisted_contracts)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", record_row)
        self.db.execute("INSERT INTO record_extras (digest, extras) VALUES (?, ?)", (digest, extras))
        self.db.execute("INSERT INTO record_outcomes (digest, outcomes, not_passed) VALUES (?, ?, ?)",
                        (digest, outcomes, not_passed))
        self.db.execute("INSERT INTO record_tests (digest, tests) VALUES (?, ?)", (digest, tests))

    def _forget_unreferenced(self) -> None:
        for table in ("records", "record_extras", "record_outcomes", "record_tests"):
            self.db.execute(f"DELETE FROM {table} WHERE digest NOT IN"
                            " (SELECT digest FROM files WHERE digest IS NOT NULL)")

    def _accepted(self) -> list[Accepted]:
        """One per content, at the first path that holds it, without its capability
        coverage and performance figures (``load_extras``: a page reads a line's newest
        record's only)."""
        records, seen = [], set()
        for row in self.db.execute(
                "SELECT f.path, f.digest, f.verdict, f.verdict_line, f.trust_level, f.trust_signer,"
                " f.trust_key, f.released, r.provenance, r.complete, r.summary"
                " FROM files f JOIN records r ON r.digest = f.digest ORDER BY f.path"):
            path, digest, verdict, line, level, signer, key, released, provenance, complete, summary = row
            if digest in seen:
                continue
            seen.add(digest)
            data = {"provenance": json.loads(provenance), "complete": bool(complete), "summary": json.loads(summary)}
            records.append(Accepted(Path(path), digest, data, verdict, line,
                                    signing.Trust(level, signer, key), bool(released)))
        return records

    def cached_lines(self, keys: dict[str, str]) -> set[str]:
        """The lines whose kept model and diff data were made under their current key."""
        return {column_id for column_id, key in self.db.execute("SELECT column_id, line_key FROM line_cache")
                if keys.get(column_id) == key}

    def cached_outlines(self, column_ids: Iterable[str]) -> dict[str, tuple[dict, str]]:
        """Lines' kept (outline data, runs script), by column id: read in one query,
        as a one-record rebuild reads hundreds of them."""
        wanted = set(column_ids)
        return {column_id: (json.loads(outline), script) for column_id, outline, script in self.db.execute(
                    "SELECT column_id, outline, runs_script FROM line_cache") if column_id in wanted}

    def cached_model(self, column_id: str) -> str:
        """A line's kept model, whole: its platform's file (``build.platform_data``)."""
        return self.db.execute("SELECT model FROM line_cache WHERE column_id = ?", (column_id,)).fetchone()[0]

    def keep_line(self, column_id: str, key: str, model: str, outline: str, script: str) -> None:
        """Kept on ``forget_lines_but``'s commit, so a build writes its lines at once."""
        self.db.execute("DELETE FROM line_cache WHERE column_id = ?", (column_id,))
        self.db.execute("INSERT INTO line_cache (column_id, line_key, outline, runs_script, model)"
                        " VALUES (?, ?, ?, ?, ?)", (column_id, key, outline, script, model))

    def forget_lines_but(self, keys: dict[str, str]) -> None:
        with self.db:
            gone = {row[0] for row in self.db.execute("SELECT column_id FROM line_cache")} - set(keys)
            self.db.executemany("DELETE FROM line_cache WHERE column_id = ?", [(c,) for c in gone])

    def site_files(self, site: str) -> dict[str, SiteFile]:
        """Path -> how it was written, of each keyed file the last build wrote into ``site``."""
        return {path: SiteFile(*written) for path, *written in self.db.execute(
            "SELECT path, file_key, sha256, size, mtime_ns FROM site_files WHERE site = ?", (site,))}

    def wrote_site(self, site: str, files: dict[str, SiteFile]) -> None:
        with self.db:
            self.db.execute("DELETE FROM site_files WHERE site = ?", (site,))
            self.db.executemany("INSERT INTO site_files (site, path, file_key, sha256, size, mtime_ns)"
                                " VALUES (?, ?, ?, ?, ?, ?)", [(site, path, *file) for path, file in files.items()])

    def unlisted_contracts(self) -> set[str]:
        """The contract ids indexed records name that the judging kit does not list."""
        return {contract for (names,) in self.db.execute(
                    "SELECT unlisted_contracts FROM records WHERE unlisted_contracts <> '[]'")
                for contract in json.loads(names)}

    def outcomes(self, digests: list[str]) -> dict[str, dict[str, str]]:
        """Each record's contract outcomes, by digest."""
        return dict(self._outcomes(digests))

    def _outcomes(self, digests: list[str]) -> Iterator[tuple[str, dict[str, str]]]:
        for chunk in _chunks(digests):
            marks = ", ".join("?" * len(chunk))
            for digest, outcomes in self.db.execute(
                    f"SELECT digest, outcomes FROM record_outcomes WHERE digest IN ({marks})", chunk):
                yield digest, json.loads(outcomes)

    def keeping(self, digests: list[str], contracts: list[str], outcomes: list[str]) -> set[str]:
        """Those of ``digests`` whose every one of ``contracts`` ended in one of
        ``outcomes`` (a release's verdict on thousands of records: read a chunk at a time)."""
        ends = set(outcomes)
        return {digest for digest, ended in self._outcomes(digests)
                if all(ended.get(contract) in ends for contract in contracts)}

    def not_passed(self, digests: list[str]) -> dict[str, list[tuple[str, str, str]]]:
        """Each record's tests that did not pass, as (contract, outcome, message), in order."""
        found = {}
        for chunk in _chunks(digests):
            marks = ", ".join("?" * len(chunk))
            for digest, tests in self.db.execute(
                    f"SELECT digest, not_passed FROM record_outcomes WHERE digest IN ({marks})", chunk):
                found[digest] = [tuple(test) for test in json.loads(tests)]
        return found

    def tests(self, digests: list[str]) -> dict[str, list[dict]]:
        """Each record's tests, as the record lists them (with the fields the pages read)."""
        found = {}
        for chunk in _chunks(digests):
            marks = ", ".join("?" * len(chunk))
            for digest, tests in self.db.execute(
                    f"SELECT digest, tests FROM record_tests WHERE digest IN ({marks})", chunk):
                # Seconds as a float, as a record's 0 always read back from the index.
                found[digest] = [{**dict(zip(_TEST_FIELDS, test)), "duration": float(test[3])}
                                 for test in json.loads(tests)]
        return found

    def load_extras(self, records: list[Accepted]) -> None:
        """Fill in ``records``' capability coverage and performance figures."""
        by_digest = {r.digest: r.data for r in records}
        for chunk in _chunks(list(by_digest)):
            marks = ", ".join("?" * len(chunk))
            for digest, extras in self.db.execute(
                    f"SELECT digest, extras FROM record_extras WHERE digest IN ({marks})", chunk):
                by_digest[digest].update(json.loads(extras))

    def load(self, records: list[Accepted], with_tests: Iterable[str] = ()) -> None:
        """Fill in ``records``' contract outcomes, and the tests of those whose digest
        is in ``with_tests`` (the records whose cells a page shows)."""
        by_digest = {r.digest: r.data for r in records}
        for data in by_digest.values():
            data.setdefault("contracts", {})
            data.setdefault("tests", [])
        # One entry per outcome, shared by the contracts that ended so (read, never
        # changed): a build loads 300 contracts of each of thousands of records.
        entries: dict[str, dict[str, str]] = {}
        for digest, outcomes in self._outcomes(list(by_digest)):
            by_digest[digest]["contracts"] = {
                contract: entries.get(outcome) or entries.setdefault(outcome, {"outcome": outcome})
                for contract, outcome in outcomes.items()}
        for digest, tests in self.tests([d for d in dict.fromkeys(with_tests) if d in by_digest]).items():
            by_digest[digest]["tests"] = tests


def _chunks(items: list[str], size: int = 500) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _utc(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")


def _stamp(path: Path, within: Path | None, keyring_digests: dict[tuple[str, Path | None], str]) -> tuple:
    """(within folder, size, mtime_ns, keyrings digest): a file judged with the same
    stamp is judged the same. ``keyring_digests`` caches the digest by folder: a build
    stamps every record file, thousands of them in a few folders."""
    try:
        stat = os.stat(path)
        size, mtime = stat.st_size, stat.st_mtime_ns
    except OSError:
        size, mtime = -1, -1
    folder = (os.path.dirname(path), within)
    if folder not in keyring_digests:
        keyring_digests[folder] = _keyrings_digest(keyring_files(path, within))
    return str(within or ""), size, mtime, keyring_digests[folder]


def _keyrings_digest(keyrings: tuple[Path, ...]) -> str:
    digests = []
    for keyring in keyrings:
        try:
            digests.append(hashlib.sha256(keyring.read_bytes()).hexdigest())
        except OSError:
            digests.append("none")
    return hashlib.sha256(" ".join(digests).encode()).hexdigest()


_worker_judging: Judging | None = None


def _start_worker(judging: Judging) -> None:
    global _worker_judging
    _worker_judging = judging


def _judge_in_worker(item: tuple[Path, Path | None]) -> tuple[Path, tuple]:
    return _judge_one(item, _worker_judging, {})


def _judge_all(items: list[tuple[Path, Path | None]], judging: Judging) -> Iterator[tuple]:
    """Each file judged, as (path, (verdict, rows)): in a pool of processes
    when there are many (judging is CPU-bound and each file independent)."""
    workers = min(len(os.sched_getaffinity(0)), 8)
    if len(items) < _POOL_FROM or workers < 2:
        keyrings: dict[Path, signing.Keyring] = {}
        yield from (_judge_one(item, judging, keyrings) for item in items)
        return
    with concurrent.futures.ProcessPoolExecutor(workers, initializer=_start_worker,
                                                initargs=(judging,)) as pool:
        yield from pool.map(_judge_in_worker, items, chunksize=16)


def _judge_one(item: tuple[Path, Path | None], judging: Judging,
               keyrings: dict[Path, signing.Keyring]) -> tuple[Path, tuple]:
    path, within = item
    try:
        record = judge(path, within, judging.kits, judging.now, judging.allow_unreleased,
                       judging.contracts, keyrings)
    except RecordRejected as exc:
        return path, (exc.rejection, None)
    trust = record.trust
    file_verdict = (record.verdict, record.verdict_line, trust.level, trust.signer, trust.key, int(record.released))
    return path, ((record.digest, int(_has_dated_waiver(record.data)), file_verdict),
                  _rows(record, judging.contracts))


def _has_dated_waiver(data: dict) -> bool:
    for test in data["tests"]:
        waived = test["outcome"] == "waived" and waivers.parse_waived(test["message"])
        if waived and waived.expires and not waived.expires.startswith("with kit"):
            return True
    return False


def _rows(record: Accepted, listed: frozenset[str]) -> tuple:
    """What the index keeps of a record: its ``records`` row, and its extras, outcomes,
    tests that did not pass and tests as JSON text (encoded here, in the judging process)."""
    data, digest = record.data, record.digest
    distribution, plugin, device = record.line
    record_row = (digest, distribution, plugin, device, _utc(record.started),
                  record.provenance["contract_version"], int(data["complete"]),
                  json.dumps(record.provenance), json.dumps(data["summary"]),
                  json.dumps(sorted(set(data["contracts"]) - listed)))
    extras = json.dumps({k: data[k] for k in _EXTRAS if k in data})
    outcomes = json.dumps({contract: entry["outcome"] for contract, entry in data["contracts"].items()})
    not_passed = json.dumps([[test["contract"], test["outcome"], test["message"]]
                             for test in data["tests"] if test["outcome"] != "passed"])
    tests = json.dumps(list(map(_TEST_ROW, data["tests"])))
    return record_row, extras, outcomes, not_passed, tests
