"""What the core asks of a CI provider: show a verdict on the build.

A report or a gate renders Markdown and chooses a context and a style; a provider
(``conformance.ci.buildkite.agent``) decides how its CI shows them. The core never
calls a provider's tool itself, so a second provider implements these two methods
and nothing of the core changes.
"""

from __future__ import annotations

from typing import Protocol

#: The styles a summary can have, from good to bad news.
STYLES = ("success", "info", "warning", "error")


class Publisher(Protocol):
    def annotate(self, body: str, context: str, style: str) -> None:
        """Replace the build's summary ``context`` with the Markdown ``body``."""

    def set_metadata(self, key: str, value: str) -> None:
        """Store a short string for later steps and for people reading the build."""


class PublishError(RuntimeError):
    """The provider could not publish; the message is one line."""
