"""What a fleet file or a flag may put into a pipeline, and how it gets there safely.

Names (devices, plugins, queues, suites, agent tags) are checked against a pattern
and used as they are: they end up in step keys, artifact paths, annotation contexts
and command lines, and a pattern is the only thing that is safe in all of those at
once. Free text (a soft-fail promotion rule, a path) is never checked that way; it is
quoted for the shell with ``shell_word``; a provider escapes what its CI would
interpolate (Buildkite: ``conformance.ci.buildkite.pipeline.for_upload``).
"""

from __future__ import annotations

import re
import shlex

#: Devices, plugin entry-point names and queues: a letter or digit, then letters,
#: digits, ``_``, ``.`` and ``-``; at most 63 characters.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}"
#: Agent tag names reach jobs as ``BUILDKITE_AGENT_META_DATA_<NAME>``, so only
#: lower-case letters, digits and ``_``.
TAG_NAME_PATTERN = r"[a-z][a-z0-9_]{0,39}"
#: Agent tag values: no spaces, quotes or commas (the agent splits its tags on commas);
#: a lone ``*`` matches any value of the tag (Buildkite has no partial wildcards).
TAG_VALUE_PATTERN = r"\*|[A-Za-z0-9_.:+-]{1,100}"
#: Suites are Python packages of the kit.
SUITE_PATTERN = r"[a-z][a-z0-9_]{0,39}"


class FleetError(ValueError):
    """Bad input from a fleet file or a flag; its message is one line for the user."""


def check_name(value: object, what: str, pattern: str = NAME_PATTERN) -> str:
    """``value`` if it is a string matching ``pattern``, else a FleetError naming it."""
    if not isinstance(value, str) or not re.fullmatch(pattern, value):
        raise FleetError(f"{what} {shown(value)} must match {pattern}")
    return value


def check_text(value: object, what: str, limit: int = 300) -> str:
    """One line of printable text, at most ``limit`` characters (it is shown in
    annotations and the log, and a newline there would start a new line of output)."""
    if not isinstance(value, str) or not value.strip():
        raise FleetError(f"{what} must be a non-empty string, not {shown(value)}")
    if len(value) > limit or not value.isprintable():
        raise FleetError(f"{what} {shown(value)} must be one printable line of at most "
                         f"{limit} characters")
    return value


def shown(value: object, limit: int = 60) -> str:
    """``value`` for an error message: repr'd, so newlines and control characters
    show as escapes and the message stays on one line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shell_word(value: str) -> str:
    """``value`` as one word for bash, whatever it holds."""
    return shlex.quote(value)
