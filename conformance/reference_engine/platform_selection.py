"""Which platform an engine runs on, in this process and in the ones it spawns."""

from __future__ import annotations

from conformance.reference_engine import platforms
from conformance.reference_engine.platforms import Platform

PlatformSpec = str | type[Platform] | None


def select_platform(spec: PlatformSpec) -> type[Platform]:
    """Make ``spec`` this process's ``current_platform`` and return it.

    None keeps the current selection; a plugin name or a ``Platform`` subclass is
    selected with ``set_current_platform``, which also carries it to spawned
    processes through the environment.
    """
    if spec is None:
        return platforms.get_current_platform()
    return platforms.set_current_platform(spec)
