"""Which platform an engine runs on, in this process and in the ones it spawns."""

from __future__ import annotations

from conformance.reference_engine import platforms
from conformance.reference_engine.platforms import Platform

PlatformSpec = str | type[Platform] | None


def select_platform(spec: PlatformSpec) -> type[Platform]:
    """Make ``spec`` this process's ``current_platform`` and return it.

    None keeps the current selection; a string is a plugin name (and, through the
    environment, reaches spawned processes too); a ``Platform`` subclass is taken as
    it is, e.g. a test's platform that no entry point registers.
    """
    if spec is None:
        return platforms.get_current_platform()
    if isinstance(spec, str):
        return platforms.set_current_platform(spec)
    if not (isinstance(spec, type) and issubclass(spec, Platform)):
        raise ValueError(f"platform must be None, a plugin name or a Platform subclass, got {spec!r}")
    # set_current_platform accepts only plugin names; until it takes a class, the
    # selection is recorded the way get_current_platform keeps it.
    platforms._selected = spec
    return spec
