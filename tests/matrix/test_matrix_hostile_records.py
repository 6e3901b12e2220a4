"""Records a hostile submitter would write (issue 23's "Why"): bad times, forged or
confusing names, invented contracts, loose files. Each is refused in one line by
`conformance verify`, `matrix build` and `matrix check` alike, never with a
traceback, and the page is still built from the other records."""

from __future__ import annotations

import copy
import datetime
import subprocess
import sys
import unicodedata

import patience
import pytest
from generated_records import make_record, write_record
from hypothesis import given
from hypothesis import strategies as st
from scenario import CONTRACTS, NOW

from conformance._version import __version__
from conformance.matrix.build import build_matrix
from conformance.matrix.check import check_submissions
from conformance.matrix.site import write_site
from conformance.results.identity import MAX_NAME_LENGTH, name_problem, skeleton
from conformance.results.timestamps import MAX_CLOCK_SKEW, parse_timestamp
from conformance.results.verify import CONFORMANT, INVALID, Checking, verify_loaded


def conformance(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args],
                          capture_output=True, text=True, timeout=patience.scaled(1800))


def passing(**options) -> dict:
    return make_record({c: "passed" for c in CONTRACTS}, **options)


def with_provenance(field: str, value, record: dict | None = None) -> dict:
    record = copy.deepcopy(record or passing())
    record["provenance"][field] = value
    return record


def renamed(part: str, name: str, **options) -> dict:
    record = passing(**options)
    where = record["provenance"]["device" if part == "device" else "plugin"]
    where["name" if part in ("device", "plugin") else part] = name
    return record


#: name -> (record, the start of the one-line reason every command gives)
HOSTILE = {
    "yesterday": (with_provenance("started_at", "yesterday"),
                  "provenance/started_at: 'yesterday' is not an RFC 3339 time with a zone"),
    "future": (with_provenance("started_at", "2099-01-01T00:00:00+00:00",
                               with_provenance("finished_at", "2099-01-01T01:00:00+00:00")),
               "provenance/started_at: 2099-01-01T00:00:00+00:00 is in the future"),
    "zoneless": (with_provenance("started_at", "2026-11-20T10:00:00"),
                 "provenance/started_at: '2026-11-20T10:00:00' is not an RFC 3339 time with a zone"),
    "date-only": (with_provenance("started_at", "2026-11-20"),
                  "provenance/started_at: '2026-11-20' is not an RFC 3339 time with a zone"),
    "february-30": (with_provenance("started_at", "2026-02-30T10:00:00Z"),
                    "provenance/started_at: '2026-02-30T10:00:00Z' is not a real time"),
    "backwards": (with_provenance("finished_at", "2026-11-20T09:59:59+00:00"),
                  "provenance/finished_at: 2026-11-20T09:59:59+00:00 is before started_at"),
    "zero-width": (renamed("device", "Test CPU\u200b"),
                   r"provenance/device/name: 'Test CPU\u200b' holds a format (invisible or "
                   "bidirectional) character U+200B"),
    "rtl-override": (renamed("plugin", "acme\u202egpu"),
                     r"provenance/plugin/name: 'acme\u202egpu' holds a format"),
    "trailing-space": (renamed("device", "Test CPU "),
                       "provenance/device/name: 'Test CPU ' has leading, trailing or doubled spaces"),
    "control": (renamed("distribution", "acme\x1b[31m"),
                r"provenance/plugin/distribution: 'acme\x1b[31m' holds a control character U+001B"),
    "hangul-filler": (renamed("plugin", "cpu\u3164"),
                      r"provenance/plugin/name: 'cpu\u3164' holds the default-ignorable character U+3164"),
    "too-long": (renamed("device", "x" * (MAX_NAME_LENGTH + 1)),
                 f"provenance/device/name: '{'x' * 76}... is {MAX_NAME_LENGTH + 1} characters long"),
    "host-override": (with_provenance("host", {"hostname": "builder\u202e", "os": "Linux", "machine": "x86_64"}),
                      r"provenance/host/hostname: 'builder\u202e' holds a format"),
    "not-nfc": (renamed("device", "Cafe\u0301 CPU"),
                r"provenance/device/name: 'Cafe\u0301 CPU' is not in Unicode NFC form"),
}


def invented_contracts(count: int) -> dict:
    """A record whose tests add ``count`` invented contract ids to the real ones."""
    results = {c: "passed" for c in CONTRACTS}
    results.update({f"made.up.contract_{n:05d}": "passed" for n in range(count)})
    return make_record(results)


INVENTED_REASON = f"names 5000 contract ids that kit {__version__} does not have, the first 'made.up.contract_00000'"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_verify_refuses_each_hostile_record_in_one_line(name):
    record, reason = HOSTILE[name]
    verdict = verify_loaded(record, "r.json")
    assert verdict.exit_code == INVALID
    assert verdict.line.startswith(f"INVALID: r.json: {reason}"), verdict.line
    assert "\n" not in verdict.line


def test_the_clock_skew_is_allowed_and_no_more():
    just_ahead = (NOW + MAX_CLOCK_SKEW).isoformat()
    too_far = (NOW + MAX_CLOCK_SKEW + MAX_CLOCK_SKEW).isoformat()
    ahead = with_provenance("finished_at", just_ahead, with_provenance("started_at", just_ahead))
    assert verify_loaded(ahead, "r.json", Checking(now=NOW)).exit_code == CONFORMANT
    beyond = with_provenance("finished_at", too_far, with_provenance("started_at", too_far))
    assert verify_loaded(beyond, "r.json", Checking(now=NOW)).exit_code == INVALID


def test_invented_contracts_are_invalid_naming_the_first_and_the_count():
    verdict = verify_loaded(invented_contracts(5000), "r.json")
    assert verdict.exit_code == INVALID
    assert verdict.line == f"INVALID: r.json: {INVENTED_REASON}: a record may hold only its kit's contracts"


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    write_record(folder, "cpu/good.record.json", passing())
    for name, (record, _) in HOSTILE.items():
        write_record(folder, f"cpu/{name}.record.json", record)
    write_record(folder, "cpu/invented.record.json", invented_contracts(5000))
    return folder, {**{n: r for n, (_, r) in HOSTILE.items()}, "invented": INVENTED_REASON}


def test_build_rejects_each_in_one_line_and_builds_from_the_rest(hostile_folder, tmp_path):
    folder, reasons = hostile_folder
    built = build_matrix([folder], now=NOW)
    rejected = {r.path.rsplit("/", 1)[1].removesuffix(".record.json"): r.reason
                for r in built.matrix.rejected}
    assert set(rejected) == set(reasons)
    for name, reason in reasons.items():
        assert rejected[name].startswith(reason), (name, rejected[name])
        assert "\n" not in rejected[name]
    assert [(c.plugin, c.device) for c in built.matrix.columns] == [("cpu", "Test CPU")]
    assert [c.id for c in built.matrix.contracts] == CONTRACTS  # no invented rows
    site = write_site(built, tmp_path / "site")
    markdown = (site / "matrix.md").read_text()
    assert "\u202e" not in markdown and "\u202e" not in (site / "index.html").read_text()


def test_a_future_record_never_hides_todays_run(tmp_path):
    write_record(tmp_path, "cpu/today.record.json", make_record(
        {**{c: "passed" for c in CONTRACTS}, CONTRACTS[0]: "failed"}, started="2026-11-24T10:00:00+00:00"))
    write_record(tmp_path, "cpu/future.record.json", HOSTILE["future"][0])
    built = build_matrix([tmp_path], now=NOW)
    (column,) = built.matrix.columns
    assert column.cells[CONTRACTS[0]].outcome == "failed"
    assert built.matrix.histories[0].transitions == []
    assert [r.path.rsplit("/", 1)[1] for r in built.matrix.rejected] == ["future.record.json"]


@pytest.mark.parametrize("name", ["yesterday", "backwards", "rtl-override"])
def test_the_commands_answer_in_one_line_without_a_traceback(hostile_folder, tmp_path, name):
    folder, reasons = hostile_folder
    path = folder / "cpu" / f"{name}.record.json"
    verify = conformance("verify", str(path))
    assert (verify.returncode, verify.stderr) == (2, "")
    assert verify.stdout.startswith(f"INVALID: {path}: {reasons[name]}")
    assert verify.stdout.count("\n") == 1
    single = tmp_path / "one"
    write_record(single, "cpu/good.record.json", passing())
    (single / "cpu" / path.name).write_bytes(path.read_bytes())
    build = conformance("matrix", "build", str(single), "-o", str(tmp_path / "site"))
    assert build.returncode == 1 and "Traceback" not in build.stderr
    assert build.stderr.startswith(f"conformance matrix: rejected {single}/cpu/{path.name}: {reasons[name]}")
    assert build.stderr.count("\n") == 1
    assert (tmp_path / "site" / "index.html").is_file()
    check = conformance("matrix", "check", str(single))
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert check.stderr.startswith(f"conformance matrix check: {single}/cpu/{path.name}: {reasons[name]}")
    assert check.stderr.count("\n") == 1


def test_two_distributions_with_one_plugin_and_device_name_are_two_columns(tmp_path):
    write_record(tmp_path, "npu/a.record.json", passing(plugin="npu", device="NPU", distribution="acme-npu"))
    write_record(tmp_path, "npu/b.record.json", make_record(
        {**{c: "passed" for c in CONTRACTS}, CONTRACTS[0]: "failed"}, plugin="npu", device="NPU",
        distribution="evil-npu", started="2026-11-21T10:00:00+00:00"))
    built = build_matrix([tmp_path], now=NOW)
    assert sorted(c.distribution for c in built.matrix.columns) == ["acme-npu", "evil-npu"]
    assert all(not c.cells[CONTRACTS[0]].regressed_since for c in built.matrix.columns)
    assert len({c.id for c in built.matrix.columns}) == 2


def test_the_bot_refuses_a_second_distribution_under_an_owned_plugin_name(tmp_path):
    write_record(tmp_path, "npu/a.record.json", passing(plugin="npu", device="NPU", distribution="acme-npu"))
    write_record(tmp_path, "npu/b.record.json", passing(plugin="npu", device="NPU", distribution="evil-npu",
                                                        started="2026-11-21T10:00:00+00:00"))
    _, problems = check_submissions(tmp_path)
    assert problems == [
        f"{tmp_path}/npu/b.record.json: plugin name 'npu' belongs to distribution 'acme-npu' "
        f"(its first record: {tmp_path}/npu/a.record.json); distribution 'evil-npu' may not submit under it"]


@pytest.mark.parametrize(("first", "second"), [
    ("cpu", "CPU"),                     # case
    ("cpu", "\u0441\u0440u"),           # Cyrillic es and er: confusables
    ("cpu", "\uff43\uff50\uff55"),      # fullwidth: NFKC
])
def test_the_bot_names_both_names_that_read_alike(tmp_path, first, second):
    write_record(tmp_path, f"{first}/a.record.json", passing(plugin=first, device="Board"))
    write_record(tmp_path, f"{second}/b.record.json", passing(
        plugin=second, device="Board", started="2026-11-21T10:00:00+00:00"))
    _, problems = check_submissions(tmp_path)
    assert problems == [f"{tmp_path}/{second}/b.record.json: plugin name {ascii(second)} reads like "
                        f"{ascii(first)} of {tmp_path}/{first}/a.record.json: two columns a reader "
                        "cannot tell apart"]


def test_the_bot_names_devices_of_one_plugin_that_read_alike(tmp_path):
    write_record(tmp_path, "npu/a.record.json", passing(plugin="npu", device="NPU-9"))
    write_record(tmp_path, "npu/b.record.json", passing(plugin="npu", device="NPU-9".lower(),
                                                        started="2026-11-21T10:00:00+00:00"))
    _, problems = check_submissions(tmp_path)
    assert problems == [f"{tmp_path}/npu/b.record.json: device name 'npu-9' reads like 'NPU-9' of "
                        f"{tmp_path}/npu/a.record.json: two columns a reader cannot tell apart"]


def test_an_empty_records_folder_is_an_error_for_both_commands(tmp_path):
    (tmp_path / "records").mkdir()
    build = conformance("matrix", "build", str(tmp_path / "records"), "-o", str(tmp_path / "site"))
    assert build.returncode == 1
    assert build.stderr == (f"conformance matrix: rejected {tmp_path / 'records'}: a records folder "
                            "that holds no record (*.json)\n")
    check = conformance("matrix", "check", str(tmp_path / "records"))
    assert check.returncode == 1
    assert check.stderr == (f"conformance matrix check: {tmp_path / 'records'}: a records folder "
                            "that holds no record (*.json)\n")
    assert check.stdout == "1 problem in 0 submitted records\n"


def test_files_named_like_records_are_named(tmp_path):
    write_record(tmp_path, "cpu/good.record.json", passing())
    for name in ("upper.JSON", "run.record", "run.json.txt"):
        write_record(tmp_path, f"cpu/{name}", passing())
    (tmp_path / "cpu" / "notes.txt").write_text("not a record")
    _, problems = check_submissions(tmp_path)
    assert sorted(problems) == sorted(
        f"{tmp_path}/cpu/{name}: named like a record but not *.json: rename it to end in .json, "
        "or move it out" for name in ("upper.JSON", "run.record", "run.json.txt"))


def test_a_lone_surrogate_is_refused_before_it_reaches_a_page(tmp_path):
    """Found by the fuzz test: JSON's \\ud800 escape carries text that is not Unicode,
    which crashed the schema validator and could not be written into a page."""
    record = passing()
    record["tests"][0]["message"] = "\ud800"
    record["contracts"]["x\udfff"] = record["contracts"].pop(CONTRACTS[0])
    path = write_record(tmp_path, "cpu/surrogate.record.json", record)
    assert "\\ud800" in path.read_text()  # json.dumps escaped it, as a hostile file would
    verify = conformance("verify", str(path))
    assert (verify.returncode, verify.stderr) == (2, "")
    assert verify.stdout == f"INVALID: {path}: holds a lone surrogate '\\ud800': not Unicode text\n"
    write_record(tmp_path, "cpu/good.record.json", passing())
    built = build_matrix([tmp_path], now=NOW)
    assert [r.reason for r in built.matrix.rejected] == [
        "off the record schema: holds a lone surrogate '\\ud800': not Unicode text"]
    write_site(built, tmp_path / "site")


def test_the_matrix_knows_the_contracts_of_the_kit_it_is_given(tmp_path):
    """A benchmark or test describing another kit (``mustpass``) names its contracts;
    records may name those and no others."""
    mustpass = {"suite.area.rule_a": "a", "suite.area.rule_b": "b"}
    write_record(tmp_path, "x/ok.record.json", make_record({"suite.area.rule_a": "passed"}, plugin="x"))
    write_record(tmp_path, "y/other.record.json", make_record({"suite.area.rule_c": "passed"}, plugin="y"))
    built = build_matrix([tmp_path], now=NOW, mustpass=mustpass)
    assert [c.plugin for c in built.matrix.columns] == ["x"]
    assert [r.reason for r in built.matrix.rejected] == [
        f"names 1 contract ids that kit {__version__} does not have, the first 'suite.area.rule_c': a record "
        "may hold only its kit's contracts"]


REFUSED_CATEGORIES = ["Cc", "Cf", "Co", "Zl", "Zp"]


@given(st.text(max_size=20), st.characters(categories=REFUSED_CATEGORIES), st.text(max_size=20))
def test_a_name_holding_an_invisible_or_control_character_is_refused(before, hidden, after):
    assert name_problem(before + hidden + after) is not None


@given(st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=20).map(
    lambda t: unicodedata.normalize("NFC", t)).filter(lambda t: not any(
        0x115F <= ord(c) <= 0x1160 or ord(c) in (0x3164, 0xFFA0) for c in t)))
def test_a_plain_name_passes_and_reads_like_its_case_variants(name):
    assert name_problem(name) is None
    assert skeleton(name) == skeleton(name.upper()) == skeleton(name.casefold())


@pytest.mark.parametrize("text", ["2026-11-20T10:00:00Z", "2026-11-20t10:00:00z", "2026-11-20 10:00:00+00:00",
                                  "2026-11-20T10:00:00.5Z", "2026-11-20T11:00:00.123456789+01:00",
                                  "2026-11-20T04:30:00.12-05:30"])
def test_every_rfc3339_form_with_a_zone_is_read(text):
    moment = parse_timestamp(text)
    assert moment.utcoffset() is not None
    assert moment.replace(microsecond=0).astimezone(datetime.timezone.utc).hour == 10


def test_record_text_never_breaks_a_one_line_message(tmp_path):
    """Found by the fuzz test: a schema message quoted an unexpected key holding a line
    break. Every refusal prints what does not print as its escape."""
    record = passing()
    record["provenance"]["x\ny\u202e"] = 1
    record["provenance"]["kit_version"] = "0.1\n0"
    verdict = verify_loaded(record, "r.json")
    assert verdict.line.count("\n") == 0 and "x\\ny\\u202e" in verdict.line
    other = passing()
    other["provenance"]["kit_version"] = "9\n9"
    write_record(tmp_path, "cpu/a.record.json", other)
    write_record(tmp_path, "cpu/b\nc.record.json", passing())
    reasons = [(r.path, r.reason) for r in build_matrix([tmp_path], now=NOW).matrix.rejected]
    assert all("\n" not in path + reason for path, reason in reasons), reasons
    assert any("9\\n9" in reason for _, reason in reasons)


def test_the_bot_names_a_file_whose_name_breaks_lines_on_one_line(tmp_path):
    write_record(tmp_path, "cpu/b\nc.record.json", passing(complete=False))
    _, problems = check_submissions(tmp_path)
    assert problems == [f"{tmp_path}/cpu/b\\nc.record.json: the run did not finish (incomplete record)"]
