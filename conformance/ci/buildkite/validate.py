"""Checking a pipeline before it is printed: Buildkite's schema, then what it misses.

The schema (vendored, ``buildkite_schema.json``) checks the shape of every step. It
passes pipelines that Buildkite rejects or runs wrongly, so ``lint`` adds: no empty
step, ``concurrency`` only with ``concurrency_group``, no ``matrix`` with
``parallelism``, every ``depends_on`` key defined, keys unique and of the allowed
pattern, integer fields holding integers, no ``cancel_on_build_failing`` (one
device's failure must not cancel the others mid-record), and no ``$`` that
``pipeline upload`` would interpolate.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from importlib import resources

import jsonschema

#: Buildkite's own rule for keys (the vendored schema states it too).
KEY_PATTERN = r"[a-zA-Z0-9_\-:${}.,]{1,100}"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
INTEGER_FIELDS = ("timeout_in_minutes", "concurrency", "parallelism", "priority")
#: A `$` not doubled: upload would replace it by the uploading agent's environment.
_UNESCAPED_DOLLAR = re.compile(r"(?<!\$)\$(\$\$)*(?!\$)")


#: A step's kind, told by the attribute only that kind has -> its schema definition.
STEP_KINDS = {"command": "commandStep", "commands": "commandStep", "group": "groupStep",
              "block": "blockStep", "input": "inputStep", "trigger": "triggerStep",
              "wait": "waitStep"}


@functools.cache
def _schema() -> dict:
    text = (resources.files("conformance.ci") / "buildkite_schema.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def _validator(definition: str | None = None) -> jsonschema.Draft7Validator:
    schema = _schema()
    if definition is not None:
        schema = {"$ref": f"#/definitions/{definition}", "definitions": schema["definitions"]}
    return jsonschema.Draft7Validator(schema)


def _explained(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """A step that matches none of the step shapes is reported against the shape its
    attributes say it has: "no shape matches" names neither the field nor the rule."""
    step = error.instance
    path = list(error.absolute_path)
    kind = next((STEP_KINDS[k] for k in STEP_KINDS if isinstance(step, dict) and k in step),
                None)
    if kind is None or not (len(path) == 2 and path[0] == "steps"):
        return [error]
    inner = list(_validator(kind).iter_errors(step))
    for found in inner:
        found.path.extendleft(reversed(path))
    return inner or [error]


def schema_problems(pipeline: dict) -> list[str]:
    """Where ``pipeline`` breaks the vendored Buildkite schema."""
    errors = [e for error in _validator().iter_errors(pipeline) for e in _explained(error)]
    errors.sort(key=lambda e: list(map(str, e.absolute_path)))
    return [f"{_where(e.absolute_path)}: {e.message}" for e in errors]


def _where(path) -> str:
    return "/".join(map(str, path)) or "<pipeline>"


def _steps(pipeline: dict) -> Iterator[tuple[str, object]]:
    """Every step, group members included, with its place in the pipeline."""
    for index, step in enumerate(pipeline.get("steps") or []):
        yield f"steps/{index}", step
        if isinstance(step, dict) and isinstance(step.get("steps"), list):
            for inner, member in enumerate(step["steps"]):
                yield f"steps/{index}/steps/{inner}", member


def _strings(value: object, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}/{index}")


def _dependencies(step: dict) -> list[str]:
    depends_on = step.get("depends_on")
    if depends_on is None:
        return []
    items = depends_on if isinstance(depends_on, list) else [depends_on]
    return [item["step"] if isinstance(item, dict) else item for item in items]


def _step_problems(where: str, step: dict) -> Iterator[str]:
    if not step:
        yield f"{where}: an empty step does nothing (a wait step is the string 'wait')"
    if ("concurrency" in step) != ("concurrency_group" in step):
        yield f"{where}: concurrency and concurrency_group go together"
    if "matrix" in step and "parallelism" in step:
        yield f"{where}: matrix and parallelism cannot be combined"
    if step.get("cancel_on_build_failing") in (True, "true"):
        yield (f"{where}: cancel_on_build_failing would let another device's failure "
               "cancel this one and leave its record partial")
    for field in INTEGER_FIELDS:
        if field in step and (isinstance(step[field], bool) or not isinstance(step[field], int)):
            yield f"{where}/{field}: must be an integer, not {step[field]!r}"
    rules = (step.get("retry") or {}).get("automatic")
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        limit = rule.get("limit") if isinstance(rule, dict) else None
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            yield f"{where}/retry/automatic/{index}/limit: must be an integer, not {limit!r}"


def lint(pipeline: dict) -> list[str]:
    """What the schema lets through but Buildkite rejects or runs wrongly."""
    problems = []
    if not pipeline.get("steps"):
        problems.append("<pipeline>: no steps")
    keys: dict[str, str] = {}
    steps = list(_steps(pipeline))
    for where, step in steps:
        if not isinstance(step, dict):
            continue
        problems.extend(_step_problems(where, step))
        key = step.get("key")
        if key is None:
            continue
        if not isinstance(key, str) or not re.fullmatch(KEY_PATTERN, key) or _UUID.fullmatch(key):
            problems.append(f"{where}/key: {key!r} must match {KEY_PATTERN} and not look "
                            "like a UUID")
        elif key in keys:
            problems.append(f"{where}/key: {key!r} is also the key of {keys[key]}")
        else:
            keys[key] = where
    for where, step in steps:
        if isinstance(step, dict):
            for dependency in _dependencies(step):
                if dependency not in keys:
                    problems.append(f"{where}/depends_on: no step has the key {dependency!r}")
    for where, text in _strings(pipeline, "<pipeline>"):
        if _UNESCAPED_DOLLAR.search(text):
            problems.append(f"{where}: a single $ would be interpolated at upload "
                            f"(write $$): {text[:80]!r}")
    return problems


def problems(pipeline: dict) -> list[str]:
    """Every reason not to upload ``pipeline``: the schema's first, then the lint's."""
    return schema_problems(pipeline) or lint(pipeline)
