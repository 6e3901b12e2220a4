"""The mutation benchmark's mutator (``bench/mutants.py``): one change per mutant, at the
place and of the kind its id names, and never in what no suite can observe."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from mutants import apply, mutants_of  # noqa: E402

SOURCE = '''"""A module docstring with 1 + 1 in it."""
import os


def step(x: int = 1, flag: bool = True) -> int:
    """Its docstring: x > 0."""
    if x > 0 and flag:
        os.getpid()
        return x + 2
    return -x
'''


def test_every_mutant_changes_exactly_one_place_and_compiles():
    """Rule: each mutant's source differs from the original in exactly the one line its
    id names, compiles, and is not the original."""
    original = ast.unparse(ast.parse(SOURCE)).splitlines()
    mutants = mutants_of(SOURCE)
    assert mutants
    for mutant in mutants:
        changed = apply(SOURCE, mutant)
        compile(changed, "<mutant>", "exec")
        lines = changed.splitlines()
        assert changed != "\n".join(original), mutant
        if mutant.what != "call removed":
            differing = [a for a, b in zip(original, lines, strict=True) if a != b]
            assert len(differing) == 1, (mutant, differing)


def test_the_kinds_of_change_at_their_lines():
    """Rule: operators, comparisons, booleans, integers, negations and calls made for
    their effect are mutated, where they stand; docstrings, annotations and imports are
    not."""
    found = {(m.line, m.what) for m in mutants_of(SOURCE)}
    assert {(7, "> -> >="), (7, "and -> or"), (7, "0 -> 1"), (8, "call removed"),
            (9, "+ -> -"), (9, "2 -> 3"), (10, "-x -> x"), (5, "1 -> 2"), (5, "True -> False")} <= found
    assert not [line for line, _ in found if line in (1, 2, 6)]


def test_mutant_ids_are_the_same_on_every_parse():
    """Rule: a mutant names the same change every time (shards agree on it)."""
    assert mutants_of(SOURCE) == mutants_of(SOURCE)


def test_a_mutant_of_another_source_is_refused():
    """Rule: applying a mutant to a source that lacks it raises, never changes another place."""
    (last,) = [m for m in mutants_of(SOURCE) if m.what == "call removed"]
    with pytest.raises(ValueError, match="no mutant"):
        apply("x = 1\n", last)
