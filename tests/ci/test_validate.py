"""The checks catch broken pipelines: the schema's, and the ones the schema misses."""

from __future__ import annotations

import copy

import pytest

from conformance.ci.buildkite.validate import lint, problems, schema_problems

GOOD = {"steps": [
    {"key": "a", "command": "true", "timeout_in_minutes": 5,
     "concurrency": 1, "concurrency_group": "conformance/device/x"},
    {"key": "b", "command": "true", "depends_on": [{"step": "a", "allow_failure": True}]},
]}


def broken(change) -> dict:
    pipeline = copy.deepcopy(GOOD)
    change(pipeline)
    return pipeline


def test_the_good_pipeline_passes_both():
    assert problems(GOOD) == []


@pytest.mark.parametrize("change, expected", [
    (lambda p: p["steps"][0].update(comand="x"), "steps/0"),            # a typo in a key
    (lambda p: p["steps"][0].update(timeout_in_minutes=0), "steps/0"),  # below 1
    (lambda p: p["steps"][0].update(key="conf/ascend"), "steps/0/key"),
    (lambda p: p["steps"][0].update(retry={"automatic": [{"exit_status": "-1"}]}), "steps/0"),
    (lambda p: p["steps"][0].update(timeout_in_minutes="$TIMEOUT"), "steps/0"),
], ids=["typo", "timeout 0", "slash in key", "string exit status", "variable integer"])
def test_the_schema_refuses(change, expected):
    found = schema_problems(broken(change))
    assert found and all(p.startswith(expected) for p in found)


@pytest.mark.parametrize("change, expected", [
    (lambda p: p["steps"].append({}), "steps/2: an empty step"),
    (lambda p: p["steps"][0].pop("concurrency_group"),
     "steps/0: concurrency and concurrency_group go together"),
    (lambda p: p["steps"][1].update(depends_on="nowhere"),
     "steps/1/depends_on: no step has the key 'nowhere'"),
    (lambda p: p["steps"][1].update(key="a"), "steps/1/key: 'a' is also the key of steps/0"),
    (lambda p: p["steps"][0].update(matrix=["x", "y"], parallelism=2),
     "steps/0: matrix and parallelism cannot be combined"),
    (lambda p: p["steps"][0].update(cancel_on_build_failing=True),
     "steps/0: cancel_on_build_failing"),
    (lambda p: p["steps"][0].update(timeout_in_minutes=True), "steps/0/timeout_in_minutes"),
    (lambda p: p["steps"][0].update(key="12345678-1234-1234-1234-123456789abc"),
     "steps/0/key"),
    (lambda p: p["steps"][0].update(command="echo $HOME"), "<pipeline>/steps/0/command"),
    (lambda p: p["steps"].clear(), "<pipeline>: no steps"),
], ids=["empty step", "concurrency alone", "unresolved depends_on", "duplicate key",
        "matrix and parallelism", "cancel_on_build_failing", "boolean integer", "uuid key",
        "single dollar", "no steps"])
def test_the_lint_refuses(change, expected):
    found = lint(broken(change))
    assert any(p.startswith(expected) for p in found), found


def test_the_lint_finds_group_members():
    pipeline = {"steps": [{"group": "g", "key": "g", "steps": [
        {"key": "x", "command": "true", "concurrency": 2}]}]}
    assert lint(pipeline) == ["steps/0/steps/0: concurrency and concurrency_group go together"]


def test_escaped_dollars_pass_the_lint():
    pipeline = broken(lambda p: p["steps"][0].update(command='echo "$$HOME" $$$$'))
    assert lint(pipeline) == []
