"""Checking the pytest arguments ``conformance run`` passes on, before any run starts.

``conformance run`` hands the arguments it does not know to pytest in a child process;
a mistyped option would otherwise surface only after that child has started, as
pytest's usage, not ours. Here pytest's own parser, with every installed pytest plugin
registered (xdist, hypothesis, this kit's), says which options it does not know, and
the kit's own values that need no torch to check (the plugin's name, the suites, the
expectations file) are checked in seconds instead of after torch and a worker start.
"""

from __future__ import annotations

import difflib


def _pytest_parser():
    from _pytest.config import get_config

    config = get_config()
    config.pluginmanager.load_setuptools_entrypoints("pytest11")
    return config._parser


def unknown_options(args: list[str]) -> list[str]:
    """Each option in ``args`` that neither pytest nor a pytest plugin defines, with
    the closest known spelling where there is one (``--tset-timeout (did you mean
    --test-timeout?)``)."""
    parser = _pytest_parser()
    _, unknown = parser.parse_known_and_unknown_args(list(args))
    argparser = getattr(parser, "optparser", None) or parser._getparser()
    known = [name for name in argparser._option_string_actions if name.startswith("--")]
    described = []
    for option in unknown:
        if not option.startswith("-"):
            continue  # a value argparse could not place belongs to an unknown option
        spelled = option.split("=", 1)[0]
        close = difflib.get_close_matches(spelled, known, n=1, cutoff=0.75)
        described.append(f"{spelled} (did you mean {close[0]}?)" if close else spelled)
    return described


def _option_value(args: list[str], option: str) -> str | None:
    """The value of ``option`` in ``args`` (``--opt=V`` or ``--opt V``; the last wins)."""
    value = None
    for i, arg in enumerate(args):
        if arg.startswith(option + "="):
            value = arg.split("=", 1)[1]
        elif arg == option and i + 1 < len(args):
            value = args[i + 1]
    return value


def refusal(platform: str, args: list[str]) -> str | None:
    """Why a run of ``platform`` with pytest ``args`` cannot start, as one line, from
    what is known without importing torch or the plugin (None if nothing)."""
    from conformance.contract.discovery import PlatformPluginError, find_plugin
    from conformance.pytest_plugin.collection import suite_paths
    from conformance.pytest_plugin.expectations import ExpectationsError, load_expectations

    try:
        if ":" not in platform:  # a bridge's namespace may need its engine to answer
            find_plugin(platform)
        suite_paths(_option_value(args, "--suite"))
        expectations = _option_value(args, "--expectations")
        if expectations:
            load_expectations(expectations)
    except (PlatformPluginError, ExpectationsError, ValueError) as exc:
        return str(exc)
    return None
