"""The index of records: a build judges only new or changed files, and the index is a
cache (deleting it rebuilds the same site)."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest
from generated_records import make_record, write_record
from scenario import CONTRACTS, NOW, write_scenario

from conformance.matrix import codec
from conformance.matrix import index as index_module
from conformance.matrix.build import build_matrix
from conformance.matrix.index import default_index_path
from conformance.matrix.site import write_site


def site_contents(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture()
def records(tmp_path):
    folder = tmp_path / "records"
    write_scenario(folder)
    return folder


def test_a_second_build_judges_nothing_and_one_new_record_is_judged_alone(records, tmp_path, kits):
    index = tmp_path / "index.sqlite"
    first = build_matrix([records], now=NOW, kits=kits, index=index)
    assert first.judged == len(first.records) + len(first.matrix.rejected) > 5
    again = build_matrix([records], now=NOW, kits=kits, index=index)
    assert again.judged == 0
    # Unchanged lines are read as outlines; their pages are made whole from the index.
    assert again.matrix.histories == [codec.history_outline(h) for h in first.matrix.histories]
    assert again.matrix.columns == [codec.outline(c) for c in first.matrix.columns]
    assert (site_contents(write_site(again, tmp_path / "again"))
            == site_contents(write_site(first, tmp_path / "first")))

    write_record(records, "cpu/run-24.record.json", make_record(
        {c: "passed" for c in CONTRACTS}, started="2026-11-24T08:00:00+00:00"))
    grown = build_matrix([records], now=NOW, kits=kits, index=index)
    assert grown.judged == 1
    assert len(grown.records) == len(first.records) + 1
    cpu = next(c for c in grown.matrix.columns if c.plugin == "cpu")
    assert cpu.date == "2026-11-24T08:00:00+00:00"


def test_an_edited_or_removed_record_is_judged_again_or_forgotten(records, tmp_path, kits):
    index = tmp_path / "index.sqlite"
    first = build_matrix([records], now=NOW, kits=kits, index=index)
    edited = records / "npu" / "npu.record.json"
    edited.write_text(edited.read_text().replace('"NPU-9"', '"NPU-10"'))
    (records / "old" / "old.record.json").unlink()
    after = build_matrix([records], now=NOW, kits=kits, index=index)
    assert after.judged == 1
    devices = {c.device for c in after.matrix.columns}
    assert "NPU-10" in devices and "NPU-9" not in devices and "Old Board" not in devices
    assert len(after.records) == len(first.records) - 1


def test_a_changed_keyring_or_an_earlier_clock_judges_again(records, tmp_path, kits):
    index = tmp_path / "index.sqlite"
    build_matrix([records], now=NOW, kits=kits, index=index)
    (records / "npu" / "allowed_signers").write_text("")
    assert build_matrix([records], now=NOW, kits=kits, index=index).judged == 1
    earlier = build_matrix([records], now=NOW - datetime.timedelta(days=2), kits=kits, index=index)
    assert earlier.judged == len(earlier.records) + len(earlier.matrix.rejected)
    # retro's record (started the 24th) now lies ahead of the clock: rejected, as without an index.
    assert [Path(r.path).name for r in earlier.matrix.rejected] == ["r.record.json"]


def test_a_keyring_at_the_top_of_the_records_judges_every_record_again(records, tmp_path, kits):
    index = tmp_path / "index.sqlite"
    first = build_matrix([records], now=NOW, kits=kits, index=index)
    (records / "allowed_signers").write_text("")
    again = build_matrix([records], now=NOW, kits=kits, index=index)
    assert again.judged == len(first.records) + len(first.matrix.rejected)


def test_deleting_the_index_rebuilds_the_same_site(records, tmp_path, kits):
    index = tmp_path / "index.sqlite"
    build_matrix([records], now=NOW, kits=kits, index=index)
    cached = write_site(build_matrix([records], now=NOW, kits=kits, index=index), tmp_path / "a")
    index.unlink()
    rebuilt = build_matrix([records], now=NOW, kits=kits, index=index)
    assert rebuilt.judged > 0
    fresh = write_site(rebuilt, tmp_path / "b")
    assert site_contents(cached) == site_contents(fresh)


def test_record_copies_of_a_previous_site_are_linked_not_copied(records, tmp_path, kits):
    site = write_site(build_matrix([records], now=NOW, kits=kits), tmp_path / "site")
    copy = next((site / "records").rglob("*.record.json"))
    inode = copy.stat().st_ino
    write_site(build_matrix([records], now=NOW, kits=kits), site)
    assert copy.stat().st_ino == inode
    assert copy.stat().st_nlink == 1  # the replaced site's link is gone with it


def test_a_folder_of_copies_is_kept_whole_only_when_it_holds_just_the_copies(records, tmp_path, kits):
    site = write_site(build_matrix([records], now=NOW, kits=kits), tmp_path / "site")
    kept, changed = sorted(folder for folder in (site / "records").iterdir())[:2]
    (changed / "planted.record.json").write_text("{}")
    write_site(build_matrix([records], now=NOW, kits=kits), site)
    assert not (changed / "planted.record.json").exists()
    assert site_contents(site) == site_contents(write_site(build_matrix([records], now=NOW, kits=kits),
                                                           tmp_path / "fresh"))
    assert kept.is_dir() and all(copy.stat().st_nlink == 1 for copy in kept.iterdir())


def test_the_command_keeps_its_index_beside_the_site_and_names_a_broken_one(records, tmp_path):
    site = tmp_path / "out" / "site"
    index = default_index_path(site)
    assert index.parent == site.parent and index.name == ".site.index.sqlite"
    command = [sys.executable, "-m", "conformance.cli", "matrix", "build", str(records / "cpu"),
               "-o", str(site), "--allow-unreleased"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert index.is_file() and not (site / index.name).exists()
    index.write_bytes(b"this is not a database" * 100)
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not an index of records" in done.stderr
    assert str(index) in done.stderr and "Traceback" not in done.stderr


def test_files_judged_in_a_pool_of_processes_give_the_same_matrix(records, kits, monkeypatch):
    alone = build_matrix([records], now=NOW, kits=kits)
    monkeypatch.setattr(index_module, "_POOL_FROM", 2)
    monkeypatch.setattr(index_module.os, "sched_getaffinity", lambda _: {0, 1})
    pooled = build_matrix([records], now=NOW, kits=kits)
    assert pooled.matrix == alone.matrix and pooled.judged == alone.judged > 2


def test_an_unchanged_platform_keeps_its_files_and_a_changed_one_is_made_again(records, tmp_path, kits):
    index = tmp_path / "index.sqlite"
    site = write_site(build_matrix([records], now=NOW, kits=kits, index=index), tmp_path / "site")
    before = {p.relative_to(site): p.stat().st_ino for p in site.rglob("*") if p.is_file()}
    write_record(records, "npu/next.record.json", make_record(
        {c: "passed" for c in CONTRACTS}, plugin="npu", device="NPU-9", distribution="npu-plugin",
        started="2026-11-24T09:00:00+00:00"))
    built = build_matrix([records], now=NOW, kits=kits, index=index)
    write_site(built, site)
    after = {p.relative_to(site): p.stat().st_ino for p in site.rglob("*") if p.is_file()}
    kept = {str(p) for p in before if before[p] == after.get(p)}
    cpu = next(c for c in built.matrix.columns if c.plugin == "cpu")
    assert {f"platforms/{cpu.id}.html", f"platforms/{cpu.id}.json", f"platforms/{cpu.id}.runs.js"} <= kept
    assert "grid/1.html" not in kept and "index.html" not in kept and "matrix.json" not in kept
    # The same files as a build from scratch.
    index.unlink()
    fresh = write_site(build_matrix([records], now=NOW, kits=kits, index=index), tmp_path / "fresh")
    assert site_contents(site) == site_contents(fresh)
