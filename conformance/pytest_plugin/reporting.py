"""The run's header, and turning pytest's reports into the result record."""

from __future__ import annotations

import json
import os

import pytest

from conformance._version import __version__
from conformance.reference_engine.platforms import CONTRACT_VERSION, get_current_platform
from conformance.reference_engine.platforms.discovery import PluginEntry
from conformance.results import outcomes
from conformance.results.provenance import collect_provenance, describe_device
from conformance.results.record import RecordWriter, RecordedTest

#: Set by ``conformance run`` so the record shows the command the user typed.
COMMAND_LINE_ENV_VAR = "CONFORMANCE_COMMAND_LINE"
_MESSAGE_LIMIT = 4000


class TerminalReporting:
    """The header naming what is under test, and ``not_supported`` as its own status."""

    def __init__(self, entry: PluginEntry) -> None:
        self.entry = entry

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        """Tag failures that are timeouts or crashes, so that the outcome survives the
        trip from an xdist worker to the record (user properties travel with it)."""
        report = yield
        if call.excinfo is not None:
            for exception, outcome in _OUTCOME_EXCEPTIONS:
                if call.excinfo.errisinstance(exception):
                    report.user_properties.append((_OUTCOME_PROPERTY, outcome))
        return report

    def pytest_report_teststatus(self, report: pytest.TestReport):
        if report.failed:
            outcome = _failure_outcome(report, "")
            if outcome:
                return outcome, outcome[0].upper(), outcome.upper().replace("_", " ")
        if report.skipped and not hasattr(report, "wasxfail"):
            if _skip_reason(report).startswith(outcomes.NOT_SUPPORTED_PREFIX):
                return outcomes.NOT_SUPPORTED, "N", "NOT SUPPORTED"
        return None

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        platform = get_current_platform()
        device = describe_device(platform)
        return [
            f"conformance kit {__version__}, contract {CONTRACT_VERSION}",
            f"platform plugin: {self.entry.describe()} -> "
            f"{platform.__module__}.{platform.__qualname__}",
            f"device: {device['name']} ({device['type']} x{device['count']})",
        ]


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else report.longreprtext
    return text[:_MESSAGE_LIMIT]


def _skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return report.longreprtext


#: Exceptions a harness raises to give a test an outcome of its own, not ``failed``.
_OUTCOME_EXCEPTIONS = ((outcomes.TimedOut, outcomes.TIMED_OUT), (outcomes.Crashed, outcomes.CRASHED))
_OUTCOME_PROPERTY = "conformance_outcome"


def _failure_outcome(report: pytest.TestReport, default: str) -> str:
    return next((v for k, v in report.user_properties if k == _OUTCOME_PROPERTY), default)


def _classify(reports: dict[str, pytest.TestReport]) -> tuple[str, str]:
    """One test's outcome and message from its setup, call and teardown reports."""
    for when in ("setup", "call"):
        report = reports.get(when)
        if report is None:
            continue
        if report.failed:
            default = outcomes.ERROR if when == "setup" else outcomes.FAILED
            return _failure_outcome(report, default), _message(report)
        if report.skipped:
            if hasattr(report, "wasxfail"):
                return outcomes.WAIVED, f"expected failure: {report.wasxfail}"
            reason = _skip_reason(report)
            if reason.startswith(outcomes.NOT_SUPPORTED_PREFIX):
                return outcomes.NOT_SUPPORTED, reason.removeprefix(outcomes.NOT_SUPPORTED_PREFIX)
            return outcomes.SKIPPED, reason
    teardown = reports.get("teardown")
    if teardown is not None and teardown.failed:
        return outcomes.ERROR, "teardown: " + _message(teardown)
    if "call" not in reports:
        return outcomes.ERROR, "the run ended before this test finished"
    return outcomes.PASSED, ""


class RecordReporter:
    """Writes the result record: one entry per test as soon as its teardown ends."""

    def __init__(self, config: pytest.Config, entry: PluginEntry, path: str) -> None:
        command_line = os.environ.get(COMMAND_LINE_ENV_VAR)
        provenance = collect_provenance(
            entry,
            get_current_platform(),
            json.loads(command_line) if command_line
            else ["pytest", *config.invocation_params.args],
        )
        self.writer = RecordWriter(path, provenance)
        self.pending: dict[str, dict[str, pytest.TestReport]] = {}
        self.recorded: set[str] = set()

    def _add(self, nodeid: str, reports: dict[str, pytest.TestReport], outcome: str,
             message: str) -> None:
        if nodeid in self.recorded:
            return
        self.recorded.add(nodeid)
        contract = next(
            (v for r in reports.values() for k, v in r.user_properties if k == "contract"),
            None,
        )
        duration = sum(r.duration for r in reports.values())
        self.writer.add(RecordedTest(nodeid, contract, outcome, duration, message))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        reports = self.pending.setdefault(report.nodeid, {})
        reports[report.when] = report
        if report.when == "teardown":
            self._add(report.nodeid, self.pending.pop(report.nodeid), *_classify(reports))
        elif report.when not in ("setup", "call"):
            # pytest-xdist reports a test whose worker died with when="???".
            reports = self.pending.pop(report.nodeid)
            self._add(report.nodeid, reports, outcomes.CRASHED, _message(report))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._add(report.nodeid or "<collection>", {}, outcomes.ERROR,
                      "collection failed: " + report.longreprtext[:_MESSAGE_LIMIT])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        for nodeid, reports in self.pending.items():
            self._add(nodeid, reports, *_classify(reports))
        self.pending.clear()
        self.writer.finish(exitstatus)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminalreporter.write_line(f"conformance record: {self.writer.path}")
