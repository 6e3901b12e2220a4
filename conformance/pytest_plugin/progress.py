"""A heading as each suite starts, with how far the run has come.

A kit run prints a dot a test for minutes (the Engine suite's tests take seconds each);
without headings a long stretch of dots says nothing about where the run is. On the
controller (under xdist, workers' tests are announced there too), the first test of
each suite prints one line: the suite, its size, and the tests finished so far.
"""

from __future__ import annotations

import collections

import pytest


def _suite(nodeid: str) -> str:
    """The suite of a kit test: the folder its module lies in (``attention/test_x.py``)."""
    path = nodeid.split("::", 1)[0].split("/")
    return path[-2] if len(path) >= 2 else ""


class SuiteProgress:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.sizes: collections.Counter[str] = collections.Counter()
        self.announced: set[str] = set()
        self.finished = 0

    def _count(self, nodeids) -> None:
        if not self.sizes:  # every xdist worker reports the same collection
            self.sizes.update(_suite(nodeid) for nodeid in nodeids)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._count(item.nodeid for item in session.items)

    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        self._count(ids)

    @pytest.hookimpl(tryfirst=True)  # before the terminal starts the test's line
    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        suite = _suite(nodeid)
        if suite in self.announced or not self.sizes.get(suite):
            return
        self.announced.add(suite)
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        total = sum(self.sizes.values())
        if terminal._tw.width_of_current_line:  # mid-way through a line of dots
            terminal.write("\n")
        terminal.write_line(f"{suite} suite: {self.sizes[suite]} tests "
                            f"({self.finished} of {total} finished so far)", bold=True)

    def pytest_runtest_logfinish(self, nodeid: str, location) -> None:
        self.finished += 1
