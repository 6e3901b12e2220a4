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


#: (dimension, value) pairs the running test has exercised; the harness takes them
#: after each test phase into that test's record entry.
_exercised: set[tuple[str, str]] = set()


def exercised(**values) -> None:
    """Note that the running test computed with these declared values, each named by
    its field in the capability declaration's record view (``dtypes=torch.bfloat16``,
    ``head_sizes=128``, ``block_sizes=16``, ``kv_cache_dtypes="auto"``,
    ``features="sliding_window"``), so the record can say which contracts exercised
    every declared value."""
    for dimension, value in values.items():
        _exercised.add((dimension, str(value).removeprefix("torch.")))


def take_exercised() -> dict[str, list[str]]:
    """The values noted since the last call, by dimension, and forget them."""
    taken: dict[str, list[str]] = {}
    for dimension, value in sorted(_exercised):
        taken.setdefault(dimension, []).append(value)
    _exercised.clear()
    return taken

