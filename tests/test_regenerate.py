"""``python -m conformance.dev regenerate``: every generated file is current, and
``--check`` names a stale one."""

from __future__ import annotations

import io
import shutil

from conformance import dev
from conformance.results.since import load_since, updated_since
from conformance.suites import registry


def test_every_generated_file_is_current():
    """Rule: the shipped mustpass lists, the guide's suite sections and the shipped
    ``cpu`` record are what the suites make now (CI runs the same check)."""
    out = io.StringIO()
    assert dev.regenerate(check=True, out=out) == 0, out.getvalue()
    paths = {generated.path.name for generated in dev.generated_files()}
    assert {"mustpass.json", "mustpass-vllm.json", "plugin-guide.md", "cpu.record.json"} <= paths


def test_check_names_a_stale_file_and_writes_nothing(tmp_path, monkeypatch):
    """Rule: ``--check`` exits 1 naming each stale file and what it is made from,
    and leaves it as it was; without ``--check`` it is rewritten and then current."""
    stale = tmp_path / "mustpass.json"
    shutil.copy(registry.MUSTPASS_PATH, stale)
    edited = stale.read_text().replace("falls back", "stays", 1)
    stale.write_text(edited)
    monkeypatch.setattr(registry, "MUSTPASS_PATH", stale)
    # Only the copy: writing must never touch the repository's own files here.
    (copy,) = [generated for generated in dev.generated_files() if generated.path == stale]

    out = io.StringIO()
    assert dev.regenerate(check=True, out=out, files=[copy]) == 1
    assert f"stale: {stale} (made from the suites' contract markers and rules)" in out.getvalue()
    assert stale.read_text() == edited

    assert dev.regenerate(check=False, out=io.StringIO(), files=[copy]) == 0
    assert stale.read_text() == registry.mustpass_text()
    assert dev.regenerate(check=True, out=io.StringIO(), files=[copy]) == 0


def test_a_record_of_other_suites_is_stale(tmp_path, monkeypatch):
    """Rule: a shipped record made by other suites (another suite hash) is stale."""
    folder = tmp_path / "cpu"
    folder.mkdir()
    record = folder / "cpu.record.json"
    record.write_text((dev.SHIPPED_RECORDS / "cpu" / "cpu.record.json").read_text()
                      .replace('"suite_hash": "sha256:', '"suite_hash": "sha256:0', 1))
    monkeypatch.setattr(dev, "SHIPPED_RECORDS", tmp_path)
    out = io.StringIO()
    assert dev.regenerate(check=True, out=out, files=[g for g in dev.generated_files() if g.path == record]) == 1
    assert f"stale: {record} (made from a run of the kit against cpu)" in out.getvalue()


def test_each_contract_carries_the_version_it_was_added_in():
    """Rule: every contract of the suites has the contract version it was added in;
    a new one takes the current version, one already listed keeps its own, one the
    suites dropped goes."""
    assert set(load_since()) == set(registry.contracts())
    assert updated_since({"a.b.c": "0.1", "gone.x.y": "0.1"}, ["a.b.c", "new.x.y"], "0.3") == {
        "a.b.c": "0.1", "new.x.y": "0.3"}
