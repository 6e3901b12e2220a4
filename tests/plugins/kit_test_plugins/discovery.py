"""Plugins that break discovery."""

import itertools

from kit_test_plugins import GoodPlatform

_calls = itertools.count()


def flip_flopping() -> str:
    """Answers a different class on every other call."""
    if next(_calls) % 2:
        return "kit_test_plugins.GoodPlatform"
    return f"{__name__}.FlipFlopPlatform"


class FlipFlopPlatform(GoodPlatform):
    pass


def not_a_platform() -> str:
    return "collections.OrderedDict"


def unavailable() -> None:
    return None


def missing_class() -> str:
    return "kit_test_plugins.NoSuchPlatform"
