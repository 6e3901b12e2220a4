"""Roll-ups of contracts whose tests end alike: ``roll_up_contracts`` rolls up each
pattern of outcomes once, and every record must still get its own, plain answer
(the verifier compares it with what the record holds, the writer writes it)."""

from __future__ import annotations

import json

from conformance.results.outcomes import Outcome
from conformance.results.record import roll_up_contracts


def test_a_pattern_rolled_up_again_is_a_record_of_its_own():
    tests = [{"contract": "a.b.c", "outcome": "passed"}, {"contract": "a.b.d", "outcome": "passed"}]
    first, second = roll_up_contracts(tests), roll_up_contracts(tests)
    first["a.b.c"]["counts"]["passed"] = 7
    first["a.b.c"]["outcome"] = "failed"
    assert second == roll_up_contracts(tests) == {
        "a.b.c": {"outcome": "passed", "counts": {"passed": 1}},
        "a.b.d": {"outcome": "passed", "counts": {"passed": 1}}}
    assert second["a.b.c"] is not second["a.b.d"]
    assert second["a.b.c"]["counts"] is not second["a.b.d"]["counts"]


def test_counts_are_keyed_by_plain_strings_whoever_made_the_pattern_first():
    written = [{"contract": "a.b.c", "outcome": Outcome.FAILED}, {"contract": "a.b.c", "outcome": Outcome.PASSED}]
    read = [{"contract": "a.b.d", "outcome": "failed"}, {"contract": "a.b.d", "outcome": "passed"}]
    rolled = {**roll_up_contracts(written), **roll_up_contracts(read)}
    for contract in ("a.b.c", "a.b.d"):
        assert rolled[contract] == {"outcome": "failed", "counts": {"passed": 1, "failed": 1}}
        assert list(rolled[contract]["counts"]) == ["passed", "failed"]  # in ``OUTCOMES`` order
        assert all(type(key) is str for key in rolled[contract]["counts"])
    assert json.loads(json.dumps(rolled)) == rolled


def test_tests_of_no_contract_roll_up_into_none_and_contracts_come_sorted():
    tests = [{"contract": "z.y.x", "outcome": "skipped"}, {"contract": None, "outcome": "failed"},
             {"contract": "a.b.c", "outcome": "waived"}, {"contract": "a.b.c", "outcome": "passed"}]
    assert roll_up_contracts(tests) == {
        "a.b.c": {"outcome": "waived", "counts": {"passed": 1, "waived": 1}},
        "z.y.x": {"outcome": "skipped", "counts": {"skipped": 1}}}
    assert list(roll_up_contracts(tests)) == ["a.b.c", "z.y.x"]
