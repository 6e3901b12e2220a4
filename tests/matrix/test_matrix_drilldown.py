"""What a cell opens on, and what history says at each change: the line that states a
failure (not its context), the reproducer, the bounded message, plugin versions and
CI links per run."""

from __future__ import annotations

from generated_records import make_record, write_record
from scenario import CONTRACTS, FLAKY, NOW, column, history_of

from conformance.matrix import drilldown, grid
from conformance.matrix.build import build_matrix

CONTEXT = ("AssertionError: call 1 of 7 (3 requests, query_lens=[1, 4, 9]):\n"
           "  output row 3 differs from the oracle by 0.25 (tolerance 0.01)\n"
           "reproduce: CONFORMANCE_HYPOTHESIS_PROFILE=ci pytest --platform=npu --suite=attention -k attention.forward.mixed\n"
           "batch: 3 requests")


def test_the_cell_shows_the_line_that_states_the_failure_not_its_context():
    assert drilldown.assertion(CONTEXT) == "output row 3 differs from the oracle by 0.25 (tolerance 0.01)"
    assert drilldown.assertion("assert 1 == 2") == "assert 1 == 2"
    assert drilldown.assertion("only context:\nmore context:") == "only context:"
    assert drilldown.assertion("") == ""


def test_the_reproducer_is_the_command_or_the_hypothesis_decorator():
    assert drilldown.reproducer(CONTEXT) == (
        "CONFORMANCE_HYPOTHESIS_PROFILE=ci pytest --platform=npu --suite=attention -k attention.forward.mixed")
    assert drilldown.reproducer("Falsifying example: f(x=1)\n@reproduce_failure('6.1', b'AAE=')\n") == (
        "@reproduce_failure('6.1', b'AAE=')")
    assert drilldown.reproducer("AssertionError: no") is None


def test_a_long_message_is_bounded_and_says_how_much_is_left_out():
    shown = drilldown.bounded("x" * 3000)
    assert shown.startswith("x" * drilldown.MESSAGE_LIMIT)
    assert shown.endswith("(1,000 more characters in the record)")


def test_cells_carry_their_tests_and_history_its_versions_links_and_messages(tmp_path, kits):
    results = {c: "passed" for c in CONTRACTS}
    write_record(tmp_path, "npu/a.record.json", make_record(
        results, plugin="npu", version="1.0", started="2026-11-20T10:00:00+00:00",
        ci={"provider": "buildkite", "build_url": "https://buildkite.example/builds/1"}))
    write_record(tmp_path, "npu/b.record.json", make_record(
        {**results, FLAKY: [("passed", ""), ("failed", CONTEXT)]}, plugin="npu", version="1.1",
        started="2026-11-21T10:00:00+00:00"))
    matrix = build_matrix([tmp_path], now=NOW, kits=kits).matrix
    cell = column(matrix, "npu").cells[FLAKY]
    assert cell.message == "output row 3 differs from the oracle by 0.25 (tolerance 0.01)"
    assert [(t.nodeid.rsplit("::", 1)[1], t.outcome) for t in cell.tests] == [
        ("test_decode[1]", "failed"), ("test_decode[0]", "passed")]
    assert cell.tests[0].reproducer.startswith("CONFORMANCE_HYPOTHESIS_PROFILE=ci pytest")
    history = history_of(matrix, "npu")
    assert [(r.plugin_version, r.ci_build) for r in history.runs] == [
        ("1.1", None), ("1.0", "https://buildkite.example/builds/1")]
    (change,) = history.transitions
    assert (change.contract, change.before, change.after) == (FLAKY, "passed", "failed")
    assert change.message == cell.message


def test_the_ci_job_link_is_the_build_page_at_the_job_and_only_an_http_one():
    build = "https://buildkite.example/org/pipe/builds/7"
    job = "0190e7a2-5c2d-4b9e-9a61-3f2d1c0b8e11"
    assert grid.ci_job_link({"build_url": build, "job_id": job}) == f"{build}#{job}"
    assert grid.ci_job_link({"build_url": build}) is None
    assert grid.ci_job_link({"build_url": "javascript:alert(1)", "job_id": job}) is None
    assert grid.ci_job_link({"build_url": build, "job_id": "x\"><script>"}) is None
