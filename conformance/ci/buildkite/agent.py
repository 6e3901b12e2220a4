"""The few ``buildkite-agent`` calls a job makes: annotate and set meta-data, the
Buildkite side of the core's ``Publisher``.

Values are passed as arguments or on stdin, never through a shell.
"""

from __future__ import annotations

import subprocess

from conformance.ci.publish import STYLES, PublishError

#: Buildkite refuses an annotation body over 1 MiB (counted in UTF-8 bytes).
ANNOTATION_LIMIT_BYTES = 1024 * 1024
TRUNCATED_NOTE = ("\n\n*This summary was cut to fit Buildkite's 1 MiB annotation limit; "
                  "the full text is in the build's artifacts.*\n")


class AgentError(PublishError):
    """A ``buildkite-agent`` call failed; the message is one line."""


def fit_annotation(body: str, limit: int = ANNOTATION_LIMIT_BYTES) -> str:
    """``body`` if it fits, else its first whole lines that fit, and a note saying so."""
    if len(body.encode("utf-8")) <= limit:
        return body
    room = limit - len(TRUNCATED_NOTE.encode("utf-8"))
    kept = body.encode("utf-8")[:room].decode("utf-8", errors="ignore")
    return kept[: kept.rfind("\n") + 1] + TRUNCATED_NOTE


def _call(arguments: list[str], stdin: str | None = None) -> None:
    try:
        subprocess.run(["buildkite-agent", *arguments], check=True,
                       input=None if stdin is None else stdin.encode("utf-8"))
    except FileNotFoundError:
        raise AgentError("buildkite-agent is not on PATH (this command runs inside a "
                         "Buildkite job)") from None
    except subprocess.CalledProcessError as exc:
        raise AgentError(f"buildkite-agent {arguments[0]} exited with "
                         f"{exc.returncode}") from None


class BuildkiteAgent:
    """The core's ``Publisher`` through the job's ``buildkite-agent``."""

    def annotate(self, body: str, context: str, style: str) -> None:
        """Replace the build's annotation ``context`` with ``body`` (cut to the limit)."""
        if style not in STYLES:
            raise ValueError(f"unknown annotation style {style!r}")
        _call(["annotate", "--context", context, "--style", style],
              stdin=fit_annotation(body))

    def set_metadata(self, key: str, value: str) -> None:
        _call(["meta-data", "set", key, value])
