"""What suites share: declaring an opt-out, requiring a declared capability, and
noting which declared values a test exercised."""

from __future__ import annotations

import pytest

from conformance.contract.platform import Platform
from conformance.results.outcomes import NOT_SUPPORTED_PREFIX


def not_supported(reason: str) -> None:
    """End the current test as ``not_supported``: the plugin declares it lacks this.

    Never use it for anything the plugin declares: a declared capability that does
    not work is a failure.
    """
    pytest.skip(NOT_SUPPORTED_PREFIX + reason)


def require_feature(platform: type[Platform], feature: str) -> None:
    """Mark the test ``not_supported`` unless ``platform`` declares ``feature``."""
    if not platform.capabilities.supports(feature):
        not_supported(f"{platform.__name__} does not declare the feature {feature!r}")
    exercised(features=feature)


#: (how, dimension, value) triples the running test has noted, ``how`` a field of a
#: record's test entry (``exercised`` or ``config_checked``); the harness takes them
#: after each test phase into that test's record entry.
_noted: set[tuple[str, str, str]] = set()


def exercised(**values) -> None:
    """Note that the running test computed with these declared values, each named by
    its field in the capability declaration's record view (``dtypes=torch.bfloat16``,
    ``head_sizes=128``, ``block_sizes=16``, ``kv_cache_dtypes="auto"``,
    ``features="sliding_window"``), so the record can say which contracts exercised
    every declared value."""
    _note("exercised", values)


def config_checked(**values) -> None:
    """Note that the running test handed these declared values to a config hook or a
    selector, which may refuse them but computes nothing with them: the record keeps
    them apart from the values computed with, and a declared value that only a config
    check saw stays unverified."""
    _note("config_checked", values)


def _note(how: str, values: dict) -> None:
    for dimension, value in values.items():
        _noted.add((how, dimension, str(value).removeprefix("torch.")))


def take_noted() -> dict[str, dict[str, list[str]]]:
    """The values noted since the last call, by how and dimension
    (``{"exercised": {"dtypes": ["float32"]}}``), and forget them."""
    taken: dict[str, dict[str, list[str]]] = {}
    for how, dimension, value in sorted(_noted):
        taken.setdefault(how, {}).setdefault(dimension, []).append(value)
    _noted.clear()
    return taken

