"""Which CI build made a record, from the variables Buildkite sets in every job.

Outside Buildkite (``BUILDKITE`` is not ``true``) there is no ``ci`` section at all,
and inside it a field is present only when its variable is set: nothing is guessed.
Torch-free, like the rest of ``results``.
"""

from __future__ import annotations

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


def ci_provenance(environ: Mapping[str, str] | None = None) -> dict | None:
    """The record's ``ci`` section for this job, or None when not run by Buildkite."""
    environ = os.environ if environ is None else environ
    if environ.get("BUILDKITE") != "true":
        return None
    section = {"provider": "buildkite"}
    section.update({field: environ[variable] for field, variable in BUILDKITE_FIELDS.items()
                    if environ.get(variable)})
    return section
