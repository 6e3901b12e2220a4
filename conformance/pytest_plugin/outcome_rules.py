"""Outcomes pytest has no word for: timeouts, crashes and waived failures.

They are settled where the test ran, on its report, so that they travel with it
from an xdist worker to the controller: a failure caused by ``TimedOut`` or
``Crashed`` is tagged with its outcome, and a failure the plugin's expectations file
waives becomes an expected failure (pytest's xfail), which fails nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.pytest_plugin.collection import contract_of_nodeid
from conformance.pytest_plugin.expectations import Waiver, waiver_for
from conformance.results import outcomes

OUTCOME_PROPERTY = "conformance_outcome"
COVERAGE_PROPERTY = "conformance_coverage"
_OUTCOME_EXCEPTIONS = ((outcomes.TimedOut, outcomes.TIMED_OUT),
                       (outcomes.Crashed, outcomes.CRASHED))


def tagged_outcome(report: pytest.TestReport) -> str | None:
    return next((v for k, v in report.user_properties if k == OUTCOME_PROPERTY), None)


def contract_property(report: pytest.TestReport) -> str | None:
    return next((v for k, v in report.user_properties if k == "contract"), None)


class OutcomeRules:
    def __init__(self, waivers: list[Waiver], strict: bool, rootpath: Path) -> None:
        self.waivers = waivers
        self.rootpath = rootpath
        self.strict = strict
        self.matched: set[Waiver] = set()

    def _match(self, nodeid: str, contract: str | None) -> None:
        waiver = waiver_for(self.waivers, nodeid, contract)
        if waiver is not None:
            self.matched.add(waiver)

    @pytest.hookimpl(trylast=True)  # after the contract ids are attached
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            self._match(item.nodeid, next((v for k, v in item.user_properties if k == "contract"), None))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        """Under xdist the controller collects nothing itself: it learns the ids."""
        for nodeid in ids:
            self._match(nodeid, contract_of_nodeid(nodeid, self.rootpath))

    def unmatched(self) -> list[Waiver]:
        return [w for w in self.waivers if w not in self.matched]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        from conformance.suites.support import take_noted

        if noted := take_noted():
            # JSON text: reports cross to the xdist controller by execnet.
            report.user_properties.append((COVERAGE_PROPERTY, json.dumps(noted)))
        if call.excinfo is not None:
            for exception, outcome in _OUTCOME_EXCEPTIONS:
                if call.excinfo.errisinstance(exception):
                    # A plain string: reports cross to the xdist controller by execnet.
                    report.user_properties.append((OUTCOME_PROPERTY, outcome.value))
        if report.when != "teardown" or report.failed:
            self._apply_waiver(report, contract_property(report), passing_call=report.when == "call")
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """On the controller, a crashed worker's report (built there, with nothing
        but a node id) gets its waiver too."""
        if report.when not in ("setup", "call", "teardown"):
            self._apply_waiver(report, contract_of_nodeid(report.nodeid, self.rootpath),
                               passing_call=False)

    def _apply_waiver(self, report: pytest.TestReport, contract: str | None,
                      passing_call: bool) -> None:
        waiver = waiver_for(self.waivers, report.nodeid, contract)
        if waiver is None or hasattr(report, "wasxfail"):
            return
        if report.failed:
            report.outcome = "skipped"
            report.wasxfail = f"waived: {waiver.describe()}"
        elif report.passed and passing_call:
            if self.strict:
                report.outcome = "failed"
                report.longrepr = (f"passed although the expectations file waives it "
                                   f"({waiver.describe()}): remove the entry "
                                   "(--strict-expectations)")
            else:
                report.wasxfail = f"unexpectedly passed; waiver can go: {waiver.describe()}"
