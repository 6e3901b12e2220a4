"""The pytest plugin behind ``pytest --platform=NAME``.

Installed through the ``pytest11`` entry point, so it is loaded by every pytest run in
an environment where the kit is installed. Without ``--platform`` it only adds its
options: it imports nothing heavy, collects nothing and registers no fixture, so
unrelated projects see no difference. With ``--platform`` it

- collects the kit's suites when no test paths are given (``collection``),
- selects the platform plugin and offers its fixtures (``fixtures``),
- settles the kit's own outcomes: timeouts (``watchdog``), crashes and waivers from
  the plugin's expectations file (``outcome_rules``, ``expectations``),
- prints a header naming plugin, device, kit and contract, gathers every outcome and
  writes the result record (``reporting``).
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
        "--test-timeout",
        metavar="SECONDS",
        type=float,
        default=300.0,
        help="how long each phase of a test may take before it ends as timed_out "
        "(default: 300; 0 disables)",
    )
    group.addoption(
        "--startup-timeout",
        metavar="SECONDS",
        type=float,
        default=600.0,
        help="how long starting a test's processes (its ranks, a vLLM engine) may take; "
        "not counted against --test-timeout or --rank-timeout (default: 600; 0 disables)",
    )
    group.addoption(
        "--expectations",
        metavar="FILE",
        help="the plugin's expectations file (TOML): known failures to record as "
        "waived, each with a reason and a link",
    )
    group.addoption(
        "--strict-expectations",
        action="store_true",
        help="fail a test that passes although the expectations file waives it",
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
    from conformance.pytest_plugin import collection, interrupts

    interrupts.quiet_until_session()

    try:
        collection.suite_paths(options.suite)  # refuse unknown names before collecting
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if options.suite or not options.file_or_dir:
        # The suites' root, not each suite: node ids then read "platform/test_x.py::..".
        args.append(str(collection.suites_root()))


def _refuse_malformed_capabilities(name: str, platform) -> None:
    """Every test reads the declaration, so a malformed one would fail dozens of them
    for one typo: it is refused before any test runs, each problem named once."""
    from conformance.contract.capabilities import PlatformCapabilities

    declared = platform.capabilities
    problems = (declared.validate() if isinstance(declared, PlatformCapabilities)
                else [f"it is a {type(declared).__name__}, not a PlatformCapabilities"])
    if problems:
        raise pytest.UsageError(f"platform plugin {name!r} declares malformed capabilities "
                                f"(platform.capabilities.well_formed): {'; '.join(problems)}")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """From here on pytest stops in order on Ctrl-C, and the record keeps what ran."""
    if session.config.option.platform:
        from conformance.pytest_plugin import interrupts

        interrupts.session_started()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Select the platform plugin and switch the kit's fixtures and reporting on."""
    if not config.option.platform:
        for option in ("suite", "conformance_record", "expectations"):
            if getattr(config.option, option):
                flag = "--" + option.replace("_", "-")
                raise pytest.UsageError(f"{flag} needs --platform=NAME")
        return
    from conformance.contract.discovery import PlatformPluginError, find_plugin
    from conformance.pytest_plugin import (
        collection,
        fixtures,
        interrupts,
        outcome_rules,
        progress,
        reporting,
        watchdog,
    )
    from conformance.pytest_plugin.expectations import ExpectationsError, load_expectations

    name = config.option.platform
    try:
        waivers = load_expectations(config.option.expectations) if config.option.expectations else []
        platform = fixtures.select_platform(config, name)
        entry = find_plugin(name)
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc)) from None
    except PlatformPluginError as exc:
        if exc.__cause__ is not None:
            # The plugin's own traceback first, then the one line that names it.
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        raise pytest.UsageError(str(exc)) from None
    except KeyboardInterrupt:
        pytest.exit(f"interrupted while loading the platform plugin {name!r}", returncode=2)
    _refuse_malformed_capabilities(name, platform)

    config.addinivalue_line(
        "markers",
        "contract(id): the contract id (suite.area.name) whose rule this test checks",
    )
    rules = outcome_rules.OutcomeRules(waivers, config.option.strict_expectations, config.rootpath)
    plugins = {
        "conformance-collection": collection.ContractCollection(config.option.suite, entry.bridge),
        "conformance-fixtures": fixtures,
        "conformance-outcome-rules": rules,
        "conformance-watchdog": watchdog.Watchdog(config.option.test_timeout,
                                                    config.option.startup_timeout),
        "conformance-terminal": reporting.TerminalReporting(entry),
    }
    if not hasattr(config, "workerinput"):
        interrupts.launch_workers_deferring_ctrl_c(config)
        # Only the controller gathers outcomes: under xdist, workers' reports reach it.
        plugins["conformance-outcomes"] = reporting.RunOutcomes(config, entry, rules)
        plugins["conformance-progress"] = progress.SuiteProgress(config)
    for plugin_name, plugin in plugins.items():
        config.pluginmanager.register(plugin, plugin_name)
