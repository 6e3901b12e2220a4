"""Which CI build made a record, from the variables Buildkite sets in every job, and
what the job's agent found before the run (its pre-flight).

Outside Buildkite (``BUILDKITE`` is not ``true``) there is no ``ci`` section at all,
and inside it a field is present only when its variable is set: nothing is guessed.
``retry_count`` says which attempt of its job a record is, so the collector can pick
the latest attempt without trusting any clock or file time.
Torch-free, like the rest of ``results``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

#: Record field -> the Buildkite job variable it is read from.
BUILDKITE_FIELDS = {
    "build_url": "BUILDKITE_BUILD_URL",
    "build_number": "BUILDKITE_BUILD_NUMBER",
    "job_id": "BUILDKITE_JOB_ID",
    "step_key": "BUILDKITE_STEP_KEY",
    "pipeline_slug": "BUILDKITE_PIPELINE_SLUG",
    "organization_slug": "BUILDKITE_ORGANIZATION_SLUG",
    "agent_name": "BUILDKITE_AGENT_NAME",
    "queue": "BUILDKITE_AGENT_META_DATA_QUEUE",
    "commit": "BUILDKITE_COMMIT",
    "branch": "BUILDKITE_BRANCH",
}
#: 0 for a job's first run, one more for each retry, automatic or manual.
RETRY_COUNT_VARIABLE = "BUILDKITE_RETRY_COUNT"
#: Set by the agent's ``pre-command`` hook: the file its pre-flight wrote.
PREFLIGHT_FILE_VARIABLE = "CONFORMANCE_PREFLIGHT_FILE"
#: A pre-flight file is a small JSON object (the health output is cut to 4000
#: characters); anything larger is not one.
PREFLIGHT_FILE_LIMIT = 64 * 1024


def ci_provenance(environ: Mapping[str, str] | None = None) -> dict | None:
    """The record's ``ci`` section for this job, or None when not run by Buildkite."""
    environ = os.environ if environ is None else environ
    if environ.get("BUILDKITE") != "true":
        return None
    section = {"provider": "buildkite"}
    section.update({field: environ[variable] for field, variable in BUILDKITE_FIELDS.items()
                    if environ.get(variable)})
    retries = environ.get(RETRY_COUNT_VARIABLE, "")
    if retries.isascii() and retries.isdigit():
        section["retry_count"] = int(retries)
    return section


def preflight_findings(environ: Mapping[str, str] | None = None) -> dict | str | None:
    """What the agent's pre-flight found, for the record's ``provenance.device``: read
    by the run itself, so the record holds it from its first write and a signature
    over the record covers it. None when no pre-flight ran; an ``<error: ...>`` string
    (as for a platform query that raises) when its file cannot be read."""
    environ = os.environ if environ is None else environ
    path = environ.get(PREFLIGHT_FILE_VARIABLE)
    if not path:
        return None
    try:
        with open(path, "rb") as opened:
            text = opened.read(PREFLIGHT_FILE_LIMIT + 1)
        if len(text) > PREFLIGHT_FILE_LIMIT:
            raise ValueError(f"over {PREFLIGHT_FILE_LIMIT} bytes")
        found = json.loads(text.decode("utf-8"))
        if not isinstance(found, dict):
            raise ValueError("not a JSON object")
    except OSError as exc:
        return f"<error: {PREFLIGHT_FILE_VARIABLE}: cannot read it: {exc.strerror}>"
    except ValueError as exc:  # also UnicodeDecodeError and json's errors
        return f"<error: {PREFLIGHT_FILE_VARIABLE}: not the pre-flight's JSON: {exc}>"
    return found
