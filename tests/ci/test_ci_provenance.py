"""The record's `ci` section: Buildkite's own variables, or nothing."""

from __future__ import annotations

from conformance.results.ci_provenance import BUILDKITE_FIELDS, ci_provenance

JOB = {
    "BUILDKITE": "true",
    "BUILDKITE_BUILD_URL": "https://buildkite.com/acme/conformance/builds/12",
    "BUILDKITE_BUILD_NUMBER": "12",
    "BUILDKITE_JOB_ID": "0190a5e4-0000-4000-8000-000000000001",
    "BUILDKITE_STEP_KEY": "conformance-cpu",
    "BUILDKITE_PIPELINE_SLUG": "conformance",
    "BUILDKITE_ORGANIZATION_SLUG": "acme",
    "BUILDKITE_AGENT_NAME": "box1-npu0",
    "BUILDKITE_AGENT_META_DATA_QUEUE": "npu",
    "BUILDKITE_COMMIT": "8e307f1a" * 5,
    "BUILDKITE_BRANCH": "main",
}


def test_every_field_comes_from_its_variable():
    section = ci_provenance(JOB)
    assert section == {"provider": "buildkite",
                       **{field: JOB[variable] for field, variable in BUILDKITE_FIELDS.items()}}


def test_outside_buildkite_there_is_no_section():
    assert ci_provenance({k: v for k, v in JOB.items() if k != "BUILDKITE"}) is None
    assert ci_provenance({}) is None


def test_unset_or_empty_variables_are_left_out_not_invented():
    job = {**JOB, "BUILDKITE_BRANCH": ""}
    del job["BUILDKITE_AGENT_META_DATA_QUEUE"]
    section = ci_provenance(job)
    assert "branch" not in section and "queue" not in section
    assert section["agent_name"] == "box1-npu0"
