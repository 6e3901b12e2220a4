"""The pytest plugin behind ``pytest --platform=NAME``.

Installed through the ``pytest11`` entry point, so it is loaded by every pytest run in
an environment where the kit is installed. Without ``--platform`` it only adds its
options: it imports nothing heavy, collects nothing and registers no fixture, so
unrelated projects see no difference. With ``--platform`` it

- collects the kit's suites when no test paths are given (``collection``),
- selects the platform plugin and offers its fixtures (``fixtures``),
- prints a header naming plugin, device, kit and contract, and writes the result
  record (``reporting``).
"""

from __future__ import annotations

import sys
import traceback

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "hardware conformance kit")
    group.addoption(
        "--platform",
        metavar="NAME",
        help="run the conformance suites against the platform plugin NAME "
        "(an entry point of the group conformance.platform_plugins)",
    )
    group.addoption(
        "--suite",
        metavar="NAMES",
        help="comma-separated suites to collect when no test paths are given "
        "(default: every suite), e.g. --suite platform,attention",
    )
    group.addoption(
        "--rank-timeout",
        metavar="SECONDS",
        type=float,
        default=120.0,
        help="how long the ranks of a multi-rank test may take before the test is "
        "timed_out and its rank processes are killed (default: 120)",
    )
    group.addoption(
        "--conformance-record",
        metavar="PATH",
        help="write the result record (JSON) of this run to PATH, updated after "
        "every test",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Point collection at the kit's suites, before pytest decides what to collect."""
    options = early_config.known_args_namespace
    if not options.platform:
        return
    from conformance.pytest_plugin import collection

    try:
        collection.suite_paths(options.suite)  # refuse unknown names before collecting
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if options.suite or not options.file_or_dir:
        # The suites' root, not each suite: node ids then read "platform/test_x.py::..".
        args.append(str(collection.suites_root()))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Select the platform plugin and switch the kit's fixtures and reporting on."""
    if not config.option.platform:
        for option in ("suite", "conformance_record"):
            if getattr(config.option, option):
                flag = "--" + option.replace("_", "-")
                raise pytest.UsageError(f"{flag} needs --platform=NAME")
        return
    from conformance.pytest_plugin import collection, fixtures, reporting
    from conformance.reference_engine.platforms import PlatformPluginError
    from conformance.reference_engine.platforms.discovery import find_plugin

    name = config.option.platform
    try:
        fixtures.select_platform(config, name)
        entry = find_plugin(name)
    except PlatformPluginError as exc:
        if exc.__cause__ is not None:
            # The plugin's own traceback first, then the one line that names it.
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        raise pytest.UsageError(str(exc)) from None

    config.addinivalue_line(
        "markers",
        "contract(id): the contract id (suite.area.name) whose rule this test checks",
    )
    config.pluginmanager.register(collection.ContractCollection(config.option.suite), "conformance-collection")
    config.pluginmanager.register(fixtures, "conformance-fixtures")
    config.pluginmanager.register(reporting.TerminalReporting(entry), "conformance-terminal")
    record_path = config.option.conformance_record
    if record_path and not hasattr(config, "workerinput"):
        # Only the controller writes: under xdist, workers' reports reach it.
        config.pluginmanager.register(
            reporting.RecordReporter(config, entry, record_path), "conformance-record"
        )
