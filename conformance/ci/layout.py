"""Names the pipeline's steps share at run time: files, keys, annotation contexts.

The generator writes them into the steps and the ``report`` and ``gate`` commands
read them back in the job, so they live in one place.
"""

from __future__ import annotations

#: Where device steps put their record and JUnit XML, one folder per device.
RESULTS_DIR = "results"
#: Where the collector writes the matrix site.
SITE_DIR = "site"
COLLECTOR_KEY = "conformance-matrix"
MATRIX_CONTEXT = "support-matrix"
GATE_CONTEXT = "conformance-gate"


def step_key(device_name: str) -> str:
    return f"conformance-{device_name}"


def annotation_context(device_name: str) -> str:
    """The context of a device's summary annotation."""
    return f"conformance-{device_name}"


def verdict_key(device_name: str) -> str:
    """The build meta-data key holding a device's one-word verdict."""
    return f"conformance-verdict-{device_name}"
