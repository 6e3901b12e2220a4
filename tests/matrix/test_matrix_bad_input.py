"""Records that must not be shown: each is rejected with a one-line reason naming the
file, and the site is still built from the others."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import patience
import pytest
from generated_records import make_record, write_record
from page_parsing import parse_page
from scenario import CONTRACTS, NOW

from conformance.matrix.build import build_matrix
from conformance.matrix.kits import Kit, installed_kit
from conformance.matrix.site import write_site

DEEP = 100_000


def good() -> dict:
    return make_record({c: "passed" for c in CONTRACTS})


def write_bad_records(folder, outside):
    """The bad records under ``folder`` (and one outside it), with the reason each
    rejection must give."""
    (folder / "bad").mkdir(parents=True)
    (folder / "bad" / "not-json.record.json").write_text("{this is not json")
    off_schema = good()
    off_schema["tests"][0]["outcome"] = "great"
    write_record(folder, "bad/off-schema.record.json", off_schema)
    (folder / "bad" / "deep.record.json").write_text("[" * DEEP + "]" * DEEP)
    with open(folder / "bad" / "huge.record.json", "wb") as huge:
        huge.truncate(3 * 2**30)  # sparse: three gigabytes that take no disk
    target = write_record(outside, "outside.record.json", good())
    os.symlink(target, folder / "bad" / "link.record.json")
    kit = installed_kit()
    tampered = make_record({c: "passed" for c in CONTRACTS},
                           kit=Kit(kit.version, kit.contract_version, "sha256:" + "0" * 64))
    write_record(folder, "bad/tampered.record.json", tampered)
    unknown = make_record({c: "passed" for c in CONTRACTS}, kit=Kit("9.9.9", "9.9", kit.suite_hash))
    write_record(folder, "bad/unknown-kit.record.json", unknown)
    edited = good()
    edited["tests"][0]["outcome"] = "failed"  # the roll-ups still say passed
    write_record(folder, "bad/edited.record.json", edited)
    return {
        "not-json": "not JSON (Expecting property name enclosed in double quotes at line 1 column 2)",
        "off-schema": "off the record schema: tests/0/outcome:",
        "deep": "nested too deeply",
        "huge": f"{3 * 2**30} bytes, over the 64 MiB limit for a record",
        "link": f"a symlink out of {folder}",
        "tampered": f"made by a modified kit: its suite hash is not kit {kit.version}'s",
        "unknown-kit": "made by kit 9.9.9, which is neither this kit nor a known release",
        "edited": "per-contract roll-up does not match the test entries",
    }


@pytest.fixture(scope="module")
def bad_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submitted")
    write_record(folder, "cpu/good.record.json", good())
    return folder, write_bad_records(folder, tmp_path_factory.mktemp("elsewhere"))


def test_each_bad_record_is_rejected_with_its_reason(bad_folder):
    folder, reasons = bad_folder
    built = build_matrix([folder], now=NOW)
    rejected = {os.path.basename(r.path).removesuffix(".record.json"): r.reason
                for r in built.matrix.rejected}
    assert set(rejected) == set(reasons)
    for name, reason in reasons.items():
        assert rejected[name].startswith(reason), name
        assert "\n" not in rejected[name]
    assert [c.plugin for c in built.matrix.columns] == ["cpu"]  # built from the good one


def test_the_site_lists_what_it_rejected(bad_folder, tmp_path):
    folder, reasons = bad_folder
    site = write_site(build_matrix([folder], now=NOW), tmp_path / "site")
    text = " ".join("".join(parse_page(site / "index.html").text).split())
    assert f"{len(reasons)} records rejected" in text
    assert str(folder / "bad" / "deep.record.json") in text
    assert f"**{len(reasons)} records rejected:**" in (site / "matrix.md").read_text()
    assert len(json.loads((site / "matrix.json").read_text())["rejected"]) == len(reasons)


def test_the_command_prints_one_line_per_rejection_and_exits_1(bad_folder, tmp_path):
    folder, reasons = bad_folder
    done = subprocess.run([sys.executable, "-m", "conformance.cli", "matrix", "build",
                           str(folder), "-o", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=patience.scaled(1800))
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == len(reasons) and "Traceback" not in done.stderr
    assert all(line.startswith(f"conformance matrix: rejected {folder}") for line in lines)
    assert (tmp_path / "site" / "index.html").is_file()


@pytest.mark.parametrize("name", ["deep", "huge", "not-json"])
def test_verify_answers_invalid_in_one_line(bad_folder, name):
    folder, reasons = bad_folder
    path = folder / "bad" / f"{name}.record.json"
    done = subprocess.run([sys.executable, "-m", "conformance.cli", "verify", str(path)],
                          capture_output=True, text=True, timeout=patience.scaled(1800))
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout.startswith(f"INVALID: {path}: {reasons[name]}")
    assert done.stdout.count("\n") == 1 and "Traceback" not in done.stderr
