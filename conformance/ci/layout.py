"""Names the pipeline's steps share at run time: files, keys, annotation contexts.

The generator writes them into the steps and the ``report`` and ``gate`` commands
read them back in the job, so they live in one place. ``generated_names`` lists
every name made from a device's name, so that the fleet can refuse, when it is
read, a device whose names would collide with another's or with the fixed ones.
"""

from __future__ import annotations

#: Where device steps put their record and JUnit XML, one folder per device.
RESULTS_DIR = "results"
#: Where the collector writes the one record that speaks for each device.
COLLECTED_DIR = "collected"
#: Where the collector writes the matrix site.
SITE_DIR = "site"
UPLOAD_KEY = "conformance-pipeline"  # the step of ci/buildkite/pipeline.yml
COLLECTOR_KEY = "conformance-matrix"
TEST_ENGINE_KEY = "conformance-test-engine"
RELEASE_GATE_KEY = "conformance-release-gate"
MATRIX_CONTEXT = "support-matrix"
GATE_CONTEXT = "conformance-gate"
RELEASE_CONTEXT = "conformance-release"

#: Names that are not made from a device's name, by kind, with what holds them.
FIXED_NAMES = {
    ("step key", UPLOAD_KEY): "the upload step of ci/buildkite/pipeline.yml",
    ("step key", COLLECTOR_KEY): "the collector step",
    ("step key", TEST_ENGINE_KEY): "the Test Engine upload step",
    ("step key", RELEASE_GATE_KEY): "the release gate step",
    ("annotation context", GATE_CONTEXT): "the gate's summary",
    ("annotation context", RELEASE_CONTEXT): "the release gate's summary",
    ("annotation context", MATRIX_CONTEXT): "the support matrix",
}


def step_key(device_name: str) -> str:
    return f"conformance-{device_name}"


def annotation_context(device_name: str) -> str:
    """The context of a device's summary annotation."""
    return f"conformance-{device_name}"


def shard_context(device_name: str, shard: int) -> str:
    """The context of the summary of shard ``shard`` (1-based) of a device's run."""
    return f"conformance-{device_name}-shard-{shard}"


def verdict_key(device_name: str) -> str:
    """The build meta-data key holding a device's one-word verdict."""
    return f"conformance-verdict-{device_name}"


def generated_names(device_name: str, shards: int = 1) -> list[tuple[str, str]]:
    """Every (kind, name) made from a device's name. Names of one kind must differ
    ignoring case: artifact folders land on case-insensitive file systems too."""
    names = [("step key", step_key(device_name)),
             ("annotation context", annotation_context(device_name)),
             ("meta-data key", verdict_key(device_name)),
             ("artifact folder", f"{RESULTS_DIR}/{device_name}")]
    if shards > 1:
        names += [("annotation context", shard_context(device_name, shard))
                  for shard in range(1, shards + 1)]
    return names
