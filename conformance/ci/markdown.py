"""Markdown for annotations, with every value from a record or a flag escaped.

Buildkite renders annotations as CommonMark with GitHub's tables and a subset of
HTML. A backslash before ASCII punctuation makes it literal in CommonMark, so
escaping all of it disarms emphasis, links, table pipes and code spans alike; ``<``,
``>`` and ``&`` become entities, so no HTML tag survives even a renderer that
ignores backslashes; line breaks become spaces, so a value cannot start a heading
or a list.
"""

from __future__ import annotations

import re
import string
from urllib.parse import quote

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_PUNCTUATION = re.compile(
    "([" + re.escape("".join(c for c in string.punctuation if c not in _ENTITIES)) + "])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def text(value: object) -> str:
    """``value`` as literal inline Markdown text, on one line."""
    flat = _CONTROL.sub("", _LINE_BREAKS.sub(" ", str(value)))
    escaped = _PUNCTUATION.sub(r"\\\1", flat)
    return "".join(_ENTITIES.get(c, c) for c in escaped)


def artifact_link(path: str) -> str:
    """A link to the build artifact at ``path``, labelled with the path."""
    return f"[{text(path)}](artifact://{quote(path, safe='/._-')})"


def table(headers: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(map(text, headers)) + " |",
             "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(text, row)) + " |" for row in rows]
    return "\n".join(lines)
