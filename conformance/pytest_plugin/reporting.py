"""What the user sees and keeps: the header, per-test status words, and the run's
outcomes gathered on the controller (terminal summary and result record)."""

from __future__ import annotations

import json
import os

import pytest

from conformance._version import __version__
from conformance.contract.discovery import PluginEntry
from conformance.contract.version import CONTRACT_VERSION
from conformance.pytest_plugin.collection import close_contracts, contract_of_nodeid
from conformance.pytest_plugin.fixtures import platform_under_test
from conformance.pytest_plugin.outcome_rules import (
    COVERAGE_PROPERTY,
    OutcomeRules,
    contract_property,
    tagged_outcome,
)
from conformance.pytest_plugin.provenance import collect_provenance, describe_device
from conformance.results import outcomes
from conformance.results.record import RecordedTest, RecordWriter

#: Set by ``conformance run`` so the record shows the command the user typed.
COMMAND_LINE_ENV_VAR = "CONFORMANCE_COMMAND_LINE"
_MESSAGE_LIMIT = 4000
#: Outcomes that mean a test ran (``not_supported`` and ``skipped`` did not).
_RAN = (outcomes.PASSED, outcomes.WAIVED, *outcomes.FAILING)


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else report.longreprtext
    return text[:_MESSAGE_LIMIT]


def _skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return report.longreprtext


def classify(reports: dict[str, pytest.TestReport]) -> tuple[str, str]:
    """One test's outcome and message from its setup, call and teardown reports (or
    the one report xdist makes for a test whose worker died)."""
    for when in ("setup", "call", "???"):
        report = reports.get(when)
        if report is None:
            continue
        if hasattr(report, "wasxfail"):
            if report.skipped:
                return outcomes.WAIVED, report.wasxfail
            if report.passed:
                return outcomes.PASSED, report.wasxfail
        if report.failed:
            if when == "???":
                return outcomes.CRASHED, _message(report)
            default = outcomes.ERROR if when == "setup" else outcomes.FAILED
            return tagged_outcome(report) or default, _message(report)
        if report.skipped:
            reason = _skip_reason(report)
            if reason.startswith(outcomes.NOT_SUPPORTED_PREFIX):
                return outcomes.NOT_SUPPORTED, reason.removeprefix(outcomes.NOT_SUPPORTED_PREFIX)
            return outcomes.SKIPPED, reason
    teardown = reports.get("teardown")
    if teardown is not None and teardown.failed:
        return tagged_outcome(teardown) or outcomes.ERROR, "teardown: " + _message(teardown)
    if "call" not in reports:
        return outcomes.ERROR, "the run ended before this test finished"
    return outcomes.PASSED, ""


def _noted(reports, how: str) -> dict[str, list[str]]:
    """The declared values a test's phases noted as ``how`` (``exercised``,
    ``config_checked``), merged, by dimension."""
    merged: dict[str, set[str]] = {}
    for report in reports:
        for key, value in report.user_properties:
            if key == COVERAGE_PROPERTY:
                for dimension, values in json.loads(value).get(how, {}).items():
                    merged.setdefault(dimension, set()).update(values)
    return {dimension: sorted(values) for dimension, values in sorted(merged.items())}


class TerminalReporting:
    """The header naming what is under test, and the kit's outcomes as statuses."""

    def __init__(self, entry: PluginEntry) -> None:
        self.entry = entry

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        platform = platform_under_test(config)
        device = describe_device(platform)
        lines = [
            f"conformance kit {__version__}, contract {CONTRACT_VERSION}",
            f"platform plugin: {self.entry.describe()} -> "
            f"{platform.__module__}.{platform.__qualname__}",
            f"device: {device['name']} ({device['type']} x{device['count']})",
        ]
        if self.entry.bridge is not None:
            bridge = self.entry.bridge
            supported = (f"supported range {bridge['supported_range']} (profile {bridge.get('profile')})"
                         if bridge.get("supported_range") else f"the bridge supports {bridge['supported_versions']}")
            lines.append(f"bridged: a {bridge['interface']} plugin, {bridge['interface']} "
                         f"{bridge['version']}: {supported}")
            if bridge.get("attention_backend"):
                lines.append(f"bridged attention backend: {bridge['attention_backend']}")
            lines += [f"the plugin's check_and_update_config changes the kit's request: {change}"
                      for change in bridge.get("config_changes", [])]
        return lines

    def pytest_report_teststatus(self, report: pytest.TestReport):
        if hasattr(report, "wasxfail") and report.skipped:
            return outcomes.WAIVED, "w", "WAIVED"
        if report.failed and (outcome := tagged_outcome(report)):
            return outcome, outcome[0].upper(), outcome.upper().replace("_", " ")
        if report.failed and report.when == "???":
            return outcomes.CRASHED, "C", "CRASHED"
        if report.skipped and _skip_reason(report).startswith(outcomes.NOT_SUPPORTED_PREFIX):
            return outcomes.NOT_SUPPORTED, "N", "NOT SUPPORTED"
        return None


class RunOutcomes:
    """Gathers every test's outcome on the controller (under xdist, workers' reports
    arrive here), keeps the record current, and holds the run to account: a suite
    whose tests all stayed unrun is an error, and stale waivers are named."""

    def __init__(self, config: pytest.Config, entry: PluginEntry, rules: OutcomeRules) -> None:
        self.rules = rules
        #: Suites the bridge cannot map: all not_supported by design, not an empty run.
        self.unmapped_suites = set((entry.bridge or {}).get("not_supported_suites", {}))
        self.rootpath = config.rootpath
        self.keyword = config.option.keyword
        self.pending: dict[str, dict[str, pytest.TestReport]] = {}
        self.recorded: dict[str, RecordedTest] = {}
        self.problems: list[str] = []
        self.writer: RecordWriter | None = None
        if config.option.conformance_record:
            command_line = os.environ.get(COMMAND_LINE_ENV_VAR)
            provenance = collect_provenance(
                entry, platform_under_test(config),
                json.loads(command_line) if command_line
                else ["pytest", *config.invocation_params.args],
            )
            self.writer = RecordWriter(config.option.conformance_record, provenance)

    def _add(self, nodeid: str, reports: dict[str, pytest.TestReport], outcome: str,
             message: str) -> None:
        if nodeid in self.recorded:
            return
        contract = next((c for r in reports.values() if (c := contract_property(r))), None)
        result = RecordedTest(
            nodeid, contract or contract_of_nodeid(nodeid, self.rootpath), outcome,
            sum(r.duration for r in reports.values()), message, _noted(reports.values(), "exercised"),
            _noted(reports.values(), "config_checked"),
        )
        self.recorded[nodeid] = result
        if self.writer is not None:
            self.writer.add(result)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        reports = self.pending.setdefault(report.nodeid, {})
        reports[report.when] = report
        if report.when in ("teardown", "???"):
            self._add(report.nodeid, self.pending.pop(report.nodeid), *classify(reports))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._add(report.nodeid or "<collection>", {}, outcomes.ERROR,
                      "collection failed: " + report.longreprtext[:_MESSAGE_LIMIT])

    def _unrun_suites(self) -> list[str]:
        ran: dict[str, bool] = {}
        for result in self.recorded.values():
            if result.contract is not None:
                suite = result.contract.split(".")[0]
                ran[suite] = ran.get(suite, False) or result.outcome in _RAN
        return sorted(suite for suite, any_ran in ran.items()
                      if not any_ran and suite not in self.unmapped_suites)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        for nodeid, reports in self.pending.items():
            self._add(nodeid, reports, *classify(reports))
        self.pending.clear()
        for suite in self._unrun_suites():
            self.problems.append(f"the {suite} suite ran no test: every one was skipped "
                                 "or not supported, which proves nothing")
            self._add(f"{suite}/<suite>", {}, outcomes.ERROR, self.problems[-1])
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if not self.recorded and self.keyword:
            close = close_contracts(self.keyword)
            self.problems.append(
                f"no test matched -k {self.keyword!r}"
                + (f"; close contract ids: {', '.join(close)}" if close else
                   "; `conformance contracts` lists every contract id"))
        if self.writer is not None and session.exitstatus != pytest.ExitCode.INTERRUPTED:
            # An interrupted run stays incomplete: what it recorded is kept, as after a kill.
            self.writer.finish(session.exitstatus)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        for waiver in self.rules.unmatched():
            terminalreporter.write_line(
                f"expectations: waiver for {waiver.id!r} matches no collected test",
                yellow=True)
        # pytest's own summary shows only its failed and error reports; a test the kit
        # ended (a hang, a crash) would show as one letter without its reason.
        for result in self.recorded.values():
            if result.outcome in (outcomes.TIMED_OUT, outcomes.CRASHED):
                reason = result.message.splitlines()[0] if result.message else ""
                terminalreporter.write_line(
                    f"{result.outcome.upper().replace('_', ' ')} {result.nodeid}: {reason}", red=True)
        for problem in self.problems:
            terminalreporter.write_line(f"ERROR: {problem}", red=True)
        if self.writer is not None:
            terminalreporter.write_line(f"conformance record: {self.writer.path}")
