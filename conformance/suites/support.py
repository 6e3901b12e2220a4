"""What suites share: declaring an opt-out, and requiring a declared capability."""

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
