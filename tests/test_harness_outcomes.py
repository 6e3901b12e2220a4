"""Outcomes beyond pass and fail: waivers from the plugin's expectations file,
timeouts, crashes, and suites that ran nothing."""

from __future__ import annotations

import textwrap

import patience
import pytest
from plugins import catalogue

from conformance.results import verify_record
from conformance.results.verify import NOT_CONFORMANT
from conformance.suites.registry import contracts

LINK = "https://example.invalid/vendor/plugin/issues/12"


def _expectations(tmp_path, entries: str):
    path = tmp_path / "expectations.toml"
    path.write_text(textwrap.dedent(entries))
    return f"--expectations={path}"


def test_waived_failure_is_waived_not_passed(run_kit, tmp_path):
    """A failure the expectations file waives is recorded as ``waived`` with its
    reason and link, and does not fail the run."""
    waive = _expectations(tmp_path, f'''
        [[waive]]
        id = "platform.runtime.memory"
        reason = "allocator reports reserved pages"
        link = "{LINK}"
    ''')
    run = run_kit("--platform=constant_memory", "--suite=platform", waive,
                  "--conformance-record=run.record.json")
    assert run.returncode == 0, run.output
    assert run.record["contracts"]["platform.runtime.memory"]["outcome"] == "waived"
    tests = [t for t in run.record["tests"] if t["contract"] == "platform.runtime.memory"]
    assert len(tests) >= 2  # the large tensor and the small ones: each fails, each waived
    for test in tests:
        assert test["outcome"] == "waived", test
        assert "allocator reports reserved pages" in test["message"] and LINK in test["message"]


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_unexpected_pass(run_kit, tmp_path, strict):
    """A waived test that passes is a pass with a warning, or a failure under
    ``--strict-expectations``; a waiver that matches nothing is named."""
    waive = _expectations(tmp_path, f'''
        [[waive]]
        id = "platform.runtime.seeding"
        reason = "seeding was broken in 1.0"
        link = "{LINK}"

        [[waive]]
        id = "platform.no_such.contract"
        reason = "stale"
        link = "{LINK}"
    ''')
    args = ["--platform=good_cpu", "--suite=platform", waive, "-rX",
            "--conformance-record=run.record.json"]
    run = run_kit(*args, *(["--strict-expectations"] if strict else []))
    assert run.returncode == (1 if strict else 0), run.output
    outcome = run.record["contracts"]["platform.runtime.seeding"]["outcome"]
    assert outcome == ("failed" if strict else "passed")
    assert "waiver for 'platform.no_such.contract' matches no collected test" in run.output


@pytest.mark.parametrize(
    ("entries", "complaint"),
    [
        ('[[waive]]\nid = "x.y"\nreason = "r"\n', "needs a non-empty 'link'"),
        ('[[waive]]\nid = "x.y"\nreason = "r"\nlink = "jira-12"\n', "is not an http(s) URL"),
        ("[[waive]\n", "is not valid TOML"),
        ('[skip]\nid = "x"\n', "unknown table"),
    ],
)
def test_malformed_expectations_are_one_line_errors(run_kit, tmp_path, entries, complaint):
    """A malformed expectations file stops the run with one line naming the file."""
    run = run_kit("--platform=cpu", _expectations(tmp_path, entries))
    assert run.returncode == 4, run.output
    (error,) = [line for line in run.output.splitlines() if line.startswith("ERROR:")]
    assert "expectations.toml" in error and complaint in error


#: The hang under test is cut after this long, and so would be any other test: long
#: enough that no other Platform-suite test (each well under a second alone, start-up
#: apart, which --startup-timeout bounds) comes near it on a loaded machine, so only
#: the hang under test can end ``timed_out``; a longer one only waits longer.
HANG_TIMEOUT_S = 30


@pytest.mark.parametrize("name", sorted(catalogue.ISOLATED))
def test_crash_or_hang_ends_one_test_only(run_kit, name):
    """A plugin that segfaults or hangs in one test gets ``crashed`` or
    ``timed_out`` on that test only; every other test keeps its outcome and the
    record is complete and valid."""
    _, contract = catalogue.ISOLATED[name]
    run = run_kit("run", f"--platform={name}", "--record=run.record.json",
                  "--suite=platform", f"--test-timeout={patience.scaled(HANG_TIMEOUT_S):g}", module="conformance.cli")
    assert run.returncode == NOT_CONFORMANT, run.output
    record = run.record
    assert record["complete"]
    expected = "crashed" if name.startswith("crashing") else "timed_out"
    outcomes = {c: r["outcome"] for c, r in record["contracts"].items()}
    assert outcomes.pop(contract) == expected, f"{contract} ended {record['contracts'][contract]}"
    others = {c: o for c, o in outcomes.items() if o not in ("passed", "not_supported")}
    assert not others, f"besides {contract}, these contracts did not pass: {others}"
    platform_contracts = {c for c in contracts() if c.startswith("platform.")}
    assert set(record["contracts"]) == platform_contracts  # one outcome each, none lost
    assert verify_record(run.record_path).valid


def test_a_suite_that_runs_nothing_is_an_error(run_kit):
    """A suite whose every selected test was skipped or not supported is an error,
    never a pass."""
    run = run_kit("--platform=cpu", "-k", "platform.runtime.pin_memory",
                  "--conformance-record=run.record.json")
    assert run.returncode == 1, run.output
    assert "the platform suite ran no test" in run.output
    errors = [t for t in run.record["tests"] if t["outcome"] == "error"]
    assert [t["nodeid"] for t in errors] == ["platform/<suite>"]
