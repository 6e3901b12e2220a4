"""Waivers end: an expectations entry may carry an expiry (a last day, or the kit
version it ends at); past it the waiver no longer applies, the failure counts, and
the page says the waiver expired."""

from __future__ import annotations

import datetime

import pytest
from generated_records import make_record, write_record
from packaging.version import Version
from page_parsing import parse_page
from scenario import CONTRACTS, NOW

from conformance._version import __version__
from conformance.matrix.build import build_matrix
from conformance.matrix.site import write_site
from conformance.pytest_plugin.expectations import ExpectationsError, load_expectations, waiver_for
from conformance.results.verify import CONFORMANT, NOT_CONFORMANT, Checking, verify_loaded

WAIVED = "attention.features.sliding_window"
LINK = "https://github.com/acme/npu/issues/12"


def expectations(tmp_path, expires: str) -> list:
    path = tmp_path / "expectations.toml"
    path.write_text(f'[[waive]]\nid = "{WAIVED}"\nreason = "window > 4096 miscomputes"\n'
                    f'link = "{LINK}"\n{expires}\n')
    return load_expectations(path)


@pytest.mark.parametrize(("line", "expires", "described"), [
    ("expires = 2026-12-31", datetime.date(2026, 12, 31), "[expires 2026-12-31]"),
    ('expires = "2026-12-31"', datetime.date(2026, 12, 31), "[expires 2026-12-31]"),
    ('expires = "0.2.0"', "0.2.0", "[expires with kit 0.2.0]"),
    ("", None, None),
])
def test_an_entry_may_say_when_it_ends(tmp_path, line, expires, described):
    (waiver,) = expectations(tmp_path, line)
    assert waiver.expires == expires
    assert waiver.describe() == f"window > 4096 miscomputes ({LINK})" + (f" {described}" if described else "")


@pytest.mark.parametrize("line", ['expires = "soon"', "expires = 12", "expires = 2026-12-31T10:00:00Z"])
def test_an_unreadable_expiry_is_one_line_naming_the_entry(tmp_path, line):
    with pytest.raises(ExpectationsError, match=r"waive entry 1: expires .* is neither a date \(2027-03-31\) "
                                                r"nor a kit version") as raised:
        expectations(tmp_path, line)
    assert "\n" not in str(raised.value)


def test_past_its_expiry_a_waiver_no_longer_applies(tmp_path):
    (dated,) = expectations(tmp_path, "expires = 2026-11-24")
    (versioned,) = expectations(tmp_path, 'expires = "0.1.0"')
    nodeid, today = "attention/test_features.py::test_sliding_window[0]", NOW.date()
    assert waiver_for([dated], nodeid, WAIVED, today=datetime.date(2026, 11, 24)) == dated  # its last day
    assert waiver_for([dated], nodeid, WAIVED, today=today) is None
    assert waiver_for([versioned], nodeid, WAIVED, today=today, kit_version="0.0.9") == versioned
    assert waiver_for([versioned], nodeid, WAIVED, today=today, kit_version="0.1.0") is None


#: A kit release after the installed one, which no record made by this kit has reached.
NEXT_MINOR = f"{Version(__version__).major}.{Version(__version__).minor + 1}.0"


def waived_record(expires: str | None) -> dict:
    suffix = f" [expires {expires}]" if expires else ""
    return make_record({**{c: "passed" for c in CONTRACTS},
                        WAIVED: [("waived", f"waived: window > 4096 miscomputes ({LINK}){suffix}")]})


@pytest.mark.parametrize(("expires", "status"), [
    (None, CONFORMANT), ("2026-12-31", CONFORMANT), ("2026-11-25", CONFORMANT),
    ("2026-11-24", NOT_CONFORMANT), ("with kit 0.1.0", NOT_CONFORMANT), (f"with kit {NEXT_MINOR}", CONFORMANT),
    ("whenever", NOT_CONFORMANT),
])
def test_verify_counts_an_expired_waiver_as_a_failure(expires, status):
    verdict = verify_loaded(waived_record(expires), "r.json", Checking(now=NOW))
    assert verdict.exit_code == status, verdict.line
    if status == NOT_CONFORMANT:
        assert f"{WAIVED}: failed (waiver expired {expires})" in verdict.line


def test_the_page_shows_an_expired_waiver_as_failed(tmp_path):
    write_record(tmp_path / "records", "cpu/a.record.json", waived_record("2026-11-01"))
    write_record(tmp_path / "records", "npu/b.record.json", make_record(
        {**{c: "passed" for c in CONTRACTS},
         WAIVED: [("waived", f"waived: tracked ({LINK}) [expires 2027-01-31]")]}, plugin="npu"))
    built = build_matrix([tmp_path / "records"], now=NOW)
    cells = {c.plugin: c.cells[WAIVED] for c in built.matrix.columns}
    assert (cells["cpu"].outcome, cells["cpu"].waiver.expired, cells["cpu"].waiver.expires) == (
        "failed", True, "2026-11-01")
    assert (cells["npu"].outcome, cells["npu"].waiver.expired) == ("waived", False)
    site = write_site(built, tmp_path / "site")
    text = " ".join("".join(parse_page(site / "platforms" / f"{built.matrix.columns[0].id}.html").text).split())
    assert "waiver expired (2026-11-01), counts as failed; reason: window > 4096 miscomputes" in text
    text += " ".join("".join(parse_page(site / "platforms" / f"{built.matrix.columns[1].id}.html").text).split())
    assert "expires 2027-01-31" in text
    assert "✘ failed (waiver expired 2026-11-01)" in (site / "matrix.md").read_text()
