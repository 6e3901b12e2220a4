"""The result record: its JSON Schema, the incremental writer and the verifier."""

from conformance.results.outcomes import NOT_SUPPORTED_PREFIX, OUTCOMES
from conformance.results.record import RecordWriter, RecordedTest
from conformance.results.verify import Verdict, verify_record

__all__ = [
    "NOT_SUPPORTED_PREFIX",
    "OUTCOMES",
    "RecordWriter",
    "RecordedTest",
    "Verdict",
    "verify_record",
]
