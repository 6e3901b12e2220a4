"""The clause audit: every clause of every rule of the contract maps to the contracts or
tests that can fail it (``conformance/suites/clause_map.py``), so a promise added to a
rule without a check is named here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance.contract import rules
from conformance.suites import clause_map


def test_every_clause_maps_to_what_can_fail_it():
    """Rule: each clause of each rule names existing contracts or tests that can fail it,
    and the table names no clause the rules lack."""
    assert clause_map.problems() == []


@pytest.mark.parametrize(("text", "expected"), [
    ("one; two. Three.", ["one;", "two.", "Three."]),
    ("kept (in float32 exactly; in half by the rule) whole.", ["kept (in float32 exactly; in half by the rule) whole."]),
    ("positions ``0 .. i`` only. Then more", ["positions ``0 .. i`` only.", "Then more"]),
    ("a value of 0.5 stays.", ["a value of 0.5 stays."]),
])
def test_clauses_split_at_top_level_sentence_ends_and_semicolons(text, expected):
    """A clause ends at a full stop or semicolon followed by a space or the end, never
    inside parentheses or code."""
    assert clause_map.clauses(text) == expected


def test_the_audit_sees_an_unmapped_clause(monkeypatch):
    """The audit above can fail: a clause appended to a rule, and an entry whose cue its
    clause lacks, are reported."""
    texts = rules.rule_texts()
    seeding = texts["platform.runtime.seeding"]
    monkeypatch.setattr(clause_map, "rule_texts",
                        lambda: {**texts, "platform.runtime.seeding": seeding + " It also sings."})
    assert clause_map.problems() == [
        "platform.runtime.seeding: clause 3 is mapped to no test: 'It also sings.'"]
    monkeypatch.setattr(clause_map, "rule_texts",
                        lambda: {**texts, "platform.runtime.seeding": "It sings."})
    assert [problem.split(" (")[0] for problem in clause_map.problems()] == [
        "platform.runtime.seeding: entry 1", "platform.runtime.seeding: entry 2"]


def test_the_table_prints():
    """``python -m conformance.suites.rule_map --clauses`` prints a Markdown row per
    clause."""
    run = subprocess.run([sys.executable, "-m", "conformance.suites.rule_map", "--clauses"],
                         capture_output=True, text=True, check=True)
    rows = run.stdout.splitlines()
    assert rows[0] == "| contract | clause | can be failed by |"
    assert len(rows) == 2 + sum(len(entries) for entries in clause_map.CLAUSES.values())
