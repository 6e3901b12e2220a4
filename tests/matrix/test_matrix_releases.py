"""Kit releases: `conformance release` records a kit's suite hash and contracts in
``released_kits.json``; the bot and the page accept only released kits' records
unless --allow-unreleased, whose use the page shows."""

from __future__ import annotations

import json
import re

import patience
import pytest
from generated_records import make_record, write_record
from page_parsing import parse_page
from scenario import CONTRACTS, NOW

from conformance.matrix.build import build_matrix
from conformance.matrix.kits import Kit, KnownKits, ReleaseError, cut_release, installed_kit, read_releases
from conformance.matrix.site import write_site
from conformance.results.provenance import suite_hash
from conformance.results.verify import load_mustpass


@pytest.fixture
def empty_releases(tmp_path):
    path = tmp_path / "released_kits.json"
    path.write_text(json.dumps({"about": "test", "releases": []}))
    return path


def test_a_cut_release_records_the_installed_suites_and_contracts(empty_releases):
    kit, added = cut_release(empty_releases)
    assert added
    (release,) = read_releases(empty_releases)
    assert (release.version, release.suite_hash) == (kit.version, suite_hash())
    assert release.contracts == frozenset(load_mustpass())
    assert cut_release(empty_releases) == (kit, False)  # once only
    assert len(read_releases(empty_releases)) == 1


def test_a_released_version_cannot_be_cut_again_with_other_suites(empty_releases):
    cut_release(empty_releases)
    changed = Kit(installed_kit().version, "0.1", "sha256:" + "1" * 64, frozenset(CONTRACTS))
    with pytest.raises(ReleaseError, match=r"was released with other suites .*changed suites need a new version"):
        cut_release(empty_releases, changed)


@pytest.mark.parametrize("version", ["0.2.0.dev1", "0.2.0rc1", "0.2.0+local"])
def test_only_final_versions_are_released(empty_releases, version):
    with pytest.raises(ReleaseError, match="is not a final release version"):
        cut_release(empty_releases, Kit(version, "0.1", suite_hash(), frozenset(CONTRACTS)))


def test_the_shipped_releases_are_well_formed_and_this_versions_hash_matches_its_suites():
    releases = read_releases()
    assert [r.version for r in releases] == sorted({r.version for r in releases},
                                                    key=lambda v: tuple(map(int, v.split("."))))
    for release in releases:
        assert re.fullmatch(r"\d+(\.\d+)*", release.version)
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", release.suite_hash)
        assert release.contracts
    installed = installed_kit()
    for release in releases:
        if release.version == installed.version:
            assert release.suite_hash == installed.suite_hash, (
                f"the suites changed after kit {release.version} was released: bump "
                "conformance/_version.py and run `conformance release`")
            assert release.contracts == installed.contracts


UNRELEASED = KnownKits(installed_kit(), ())


def test_records_of_an_unreleased_kit_are_refused_unless_allowed(tmp_path):
    write_record(tmp_path / "records", "cpu/a.record.json", make_record({c: "passed" for c in CONTRACTS}))
    refused = build_matrix([tmp_path / "records"], now=NOW, kits=UNRELEASED)
    assert [r.reason for r in refused.matrix.rejected] == [
        f"made by kit {installed_kit().version}, which is not a release listed in released_kits.json "
        "(a development kit); --allow-unreleased shows it, marked as such"]
    assert refused.matrix.unreleased_note is None

    allowed = build_matrix([tmp_path / "records"], now=NOW, kits=UNRELEASED, allow_unreleased=True)
    (column,) = allowed.matrix.columns
    assert column.unreleased == f"kit {installed_kit().version} is not released"
    assert allowed.matrix.unreleased_note.startswith("Built with --allow-unreleased: ")
    assert "1 of 1 columns come from one" in allowed.matrix.unreleased_note
    site = write_site(allowed, tmp_path / "site")
    text = " ".join("".join(parse_page(site / "index.html").text).split())
    assert "⚠ Unreleased kits. Built with --allow-unreleased" in text
    assert "⚠ unreleased kit: kit" in text
    assert "Unreleased kits.** Built with --allow-unreleased" in (site / "matrix.md").read_text()


def test_the_page_shows_the_flag_even_when_every_kit_is_released(tmp_path):
    write_record(tmp_path / "records", "cpu/a.record.json", make_record({c: "passed" for c in CONTRACTS}))
    released = KnownKits(installed_kit(), (installed_kit(),))
    built = build_matrix([tmp_path / "records"], now=NOW, kits=released, allow_unreleased=True)
    assert built.matrix.unreleased_note.startswith("Built with --allow-unreleased")
    assert "0 of 1 columns" in built.matrix.unreleased_note
    assert built.matrix.columns[0].unreleased is None


def test_the_commands_take_the_flag_and_the_page_says_it_was_used(tmp_path):
    import subprocess
    import sys

    write_record(tmp_path / "records", "cpu/a.record.json", make_record({c: "passed" for c in CONTRACTS}))
    build = subprocess.run([sys.executable, "-m", "conformance.cli", "matrix", "build", "--allow-unreleased",
                            str(tmp_path / "records"), "-o", str(tmp_path / "site")],
                           capture_output=True, text=True, timeout=patience.scaled(1800))
    assert build.returncode == 0, build.stderr
    page = " ".join("".join(parse_page(tmp_path / "site" / "index.html").text).split())
    assert "⚠ Unreleased kits. Built with --allow-unreleased" in page
    check = subprocess.run([sys.executable, "-m", "conformance.cli", "matrix", "check", "--allow-unreleased",
                            str(tmp_path / "records")], capture_output=True, text=True, timeout=patience.scaled(1800))
    assert (check.returncode, check.stdout) == (0, "1 submitted record verified; the site builds\n")
