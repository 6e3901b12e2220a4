"""The result record: its JSON Schema, the incremental writer and the verifier.

Nothing here imports torch or the engine, so records can be verified and published
on a machine without devices.
"""

from conformance.results.outcomes import NOT_SUPPORTED_PREFIX, OUTCOMES, Outcome
from conformance.results.record import RecordedTest, RecordWriter
from conformance.results.verify import Status, Verdict, verify_record

__all__ = [
    "NOT_SUPPORTED_PREFIX",
    "OUTCOMES",
    "Outcome",
    "RecordWriter",
    "RecordedTest",
    "Status",
    "Verdict",
    "verify_record",
]
