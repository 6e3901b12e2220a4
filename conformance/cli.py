"""The ``conformance`` command.

- ``conformance run --platform NAME [--record PATH] [--bench] [PYTEST ARGS...]`` runs
  the suites under pytest in a child process, writing the result record (with
  ``--bench``, then its performance figures: ``conformance/performance/``), then
  verifies it.
- ``conformance verify PATH...`` checks records and prints one verdict line each
  (with ``--allowed-signers FILE``, checks a signed record's key against a keyring).
- ``conformance release`` records the installed kit as released (its suite hash) in
  ``conformance/matrix/released_kits.json``, and keeps its contract's snapshot
  (``conformance/tiers/contract_release.py``).
- ``conformance plugins`` lists the installed platform plugins and whether each is
  usable here.
- ``conformance contracts`` prints the mustpass list: every required contract and
  the rule it checks.
- ``conformance pipeline`` prints the Buildkite pipeline for a fleet of device agents,
  and holds the commands its jobs run (``conformance/ci/buildkite/cli.py``).
- ``conformance matrix build RECORDS... -o SITE`` writes the support matrix;
  ``conformance matrix check matrix/records`` reviews submitted records
  (``conformance/matrix/cli.py``).
- ``conformance init PATH --name NAME`` writes a plugin package to start from
  (``conformance/scaffold/cli.py``).
- ``conformance tiers``, ``conformance release-check --kit VERSION`` and ``conformance
  drift --from A --to B``: support tiers, the release gate and the contract's drift
  (``conformance/tiers_cli.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from conformance import tiers_cli
from conformance._version import __version__
from conformance.ci.buildkite import cli as pipeline_cli
from conformance.matrix import cli as matrix_cli
from conformance.performance import recording as performance
from conformance.process_lifetime import dying_with_this_process
from conformance.scaffold import cli as init_cli


def _default_record_path(platform: str) -> Path:
    return Path(f"conformance-{re.sub(r'[^A-Za-z0-9_.-]', '_', platform)}.record.json")


def run(args: argparse.Namespace, pytest_args: list[str]) -> int:
    from conformance.pytest_plugin.reporting import COMMAND_LINE_ENV_VAR
    from conformance.results import verify_record

    record = Path(args.record) if args.record else _default_record_path(args.platform)
    if not any(arg in ("-n", "--numprocesses") or arg.startswith(("-n", "--numprocesses="))
               for arg in pytest_args):
        # Tests run in a worker process: a crash ends one test (recorded as crashed)
        # and a fresh worker carries on, however many times that happens.
        pytest_args = ["-n", "1", *pytest_args]
    if args.shard:
        from conformance.results.sharding import ShardError, parse_shard

        try:
            parse_shard(args.shard)
        except ShardError as exc:
            print(f"conformance run: {exc}", file=sys.stderr)
            return 2
        pytest_args = ["-p", "conformance.pytest_plugin.sharding",
                       f"--conformance-shard={args.shard}", *pytest_args]
    # pytest, with Ctrl-C before its first test ending it with one line.
    command = [sys.executable, "-m", "conformance.pytest_plugin.interrupts", f"--platform={args.platform}",
               f"--conformance-record={record}", "--max-worker-restart=1000000",
               *pytest_args]
    env = {**os.environ, COMMAND_LINE_ENV_VAR: json.dumps(["conformance", *sys.argv[1:]])}
    # A child process, so that whatever the plugin does to its process, the verdict
    # below is still printed from whatever the record holds.
    before = _modified(record)
    exit_status = _call_through_ctrl_c(command, env)
    if not record.exists() or _modified(record) == before:
        # A record left by an earlier run must not stand in for this one.
        if exit_status in _INTERRUPTED:
            return _interrupted_status(exit_status)  # the child said so in one line
        print(f"conformance: no record was written to {record} "
              f"(pytest exited with {exit_status})", file=sys.stderr)
        return exit_status or 2
    if args.bench and exit_status not in _INTERRUPTED:
        performance.bench_record(record, args.platform)  # one line either way; the record is kept
    verdict = verify_record(record)
    if exit_status in _INTERRUPTED:
        print(f"conformance run: interrupted; the record {record} is kept, marked incomplete "
              f"({verdict.line.split(': ', 1)[0]})", file=sys.stderr)
        return _interrupted_status(exit_status)
    print(verdict.line)
    return verdict.exit_code


def _modified(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


#: pytest's exit status for an interrupted session, and a child killed by SIGINT.
_INTERRUPTED = (2, -signal.SIGINT, -signal.SIGTERM)


def _interrupted_status(exit_status: int) -> int:
    """The shell's status for a run ended by a signal: 143 for SIGTERM, else 130."""
    return 128 + signal.SIGTERM if exit_status == -signal.SIGTERM else 130


def _call_through_ctrl_c(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` to its end, in a process group of its own, so that Ctrl-C from
    the terminal reaches this process alone: it is passed on to pytest's controller,
    which stops in order and keeps the record, while its workers (which may still be
    starting Python) see nothing and are stopped by it. SIGTERM (a CI job cancelled)
    goes to the whole group, which ends at once; the record holds what had finished.
    SIGKILL, which no process can pass on, ends the child too: the kernel kills it
    once this process is gone (``process_lifetime``)."""
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True}
    child = subprocess.Popen(command, env=env, preexec_fn=dying_with_this_process(), **group)

    def forward(signum, frame) -> None:
        try:
            if signum == signal.SIGINT:
                child.send_signal(signal.SIGINT)
            else:
                os.killpg(child.pid, signum)
        except ProcessLookupError:
            pass

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        return child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def verify(args: argparse.Namespace) -> int:
    from conformance.results import verify_record
    from conformance.results.signing import SigningError, load_keyring
    from conformance.results.verify import Checking

    try:
        checking = Checking(
            vendor_keyring=load_keyring(args.allowed_signers) if args.allowed_signers else None,
            ci_keyring=load_keyring(args.ci_allowed_signers) if args.ci_allowed_signers else None)
    except SigningError as exc:
        print(f"conformance verify: {exc}", file=sys.stderr)
        return 2
    worst = 0
    for path in args.records:
        verdict = verify_record(path, checking)
        print(verdict.line)
        for problem in verdict.problems[1:]:
            print(f"  also: {problem}")
        worst = max(worst, verdict.exit_code)
    return worst


def release(args: argparse.Namespace) -> int:
    from conformance.matrix.kits import ReleaseError, cut_release, installed_kit
    from conformance.tiers import contract_release

    try:
        contract_release.check(installed_kit().version, installed_kit().contract_version)
        kit, added = cut_release()
    except (ReleaseError, contract_release.ContractReleaseError) as exc:
        print(f"conformance release: {exc}", file=sys.stderr)
        return 2
    snapshot, _ = contract_release.keep(kit.version, kit.contract_version)
    state = "released" if added else "was already released"
    print(f"kit {kit.version} {state}: contract version {kit.contract_version}, "
          f"{len(kit.contracts)} contracts, suites {kit.suite_hash}; contract snapshot {snapshot.name}")
    return 0


def plugins(args: argparse.Namespace) -> int:
    from conformance.contract.discovery import PlatformPluginError, installed_plugins, load_platform
    from conformance.reference_engine.kernels.cpu import native

    for entry in installed_plugins().values():
        try:
            cls = load_platform(entry.name)
            status = f"usable: {cls.__module__}.{cls.__qualname__}"
        except PlatformPluginError as exc:
            status = f"not usable: {exc}"
        print(f"{entry.describe()}  {status}")
    # The reference every plugin is compared with runs at this host's speed only.
    print(f"cpu platform's C kernel variant on this host: {native.describe()}")
    return 0


def contracts(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from conformance.results.since import load_since
    from conformance.results.verify import load_mustpass

    since = load_since()
    rows = [(contract, since.get(contract, ""), rule) for contract, rule in load_mustpass().items()
            if not args.suite or contract.split(".")[0] == args.suite]
    print(tabulate(rows, headers=["contract", "since", "rule"], maxcolwidths=[None, None, 90]))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Hardware conformance kit for inference-engine platform plugins.",
    )
    parser.add_argument("--version", action="version", version=f"conformance {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run_parser = commands.add_parser(
        "run", help="run the suites against a platform plugin and write a result record",
        description="Run the conformance suites under pytest, in a worker process so "
        "that a crash ends only the test it happens in (-n N for N workers); arguments "
        "this command does not know (-n 2, -k EXPR, --suite ...) are passed to pytest.",
    )
    run_parser.add_argument("--platform", required=True, metavar="NAME",
                            help="the platform plugin's entry-point name")
    run_parser.add_argument("--record", metavar="PATH",
                            help="where to write the record "
                            "(default: conformance-NAME.record.json)")
    run_parser.add_argument("--bench", action="store_true", help=performance.HELP)
    run_parser.add_argument("--shard", metavar="K/N",
                            help="run only shard K of N (1-based) of the tests, split by "
                            "node id; the collector merges the shards' records into one")
    parser.run_parser = run_parser  # main() refuses mistyped pytest options with its usage

    verify_parser = commands.add_parser(
        "verify", help="check result records and print a verdict for each",
        description="Exit status: 0 conformant, 1 not conformant, 2 invalid record, "
        "3 valid but incomplete record (the worst of all records given).",
    )
    verify_parser.add_argument("records", nargs="+", metavar="PATH")
    verify_parser.add_argument("--allowed-signers", metavar="FILE",
                               help="the vendor's keyring ('SIGNER ssh-ed25519 KEY' lines): a "
                               "signed record must be signed by one of its keys")
    verify_parser.add_argument("--ci-allowed-signers", metavar="FILE",
                               help="the CI's keyring: a record signed by one of its keys is "
                               "built by CI, and must name its build")
    commands.add_parser(
        "release", help="record the installed kit as released (its suite hash) in "
        "conformance/matrix/released_kits.json",
        description="Run in the kit's source checkout at a final version, and commit the "
        "file: the review bot then accepts this kit's records.")

    commands.add_parser("plugins", help="list installed platform plugins")
    contracts_parser = commands.add_parser(
        "contracts", help="print the required contracts (mustpass) and their rules")
    contracts_parser.add_argument("--suite", help="only this suite's contracts")
    pipeline_cli.add_parser(commands)
    matrix_cli.add_parser(commands)
    init_cli.add_parser(commands)
    tiers_cli.add_parsers(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before a command installed its own handling
        print("conformance: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    if hasattr(signal, "SIGPIPE"):  # `conformance contracts | head` ends quietly
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "run":
        from conformance.pytest_plugin.arguments import refusal, unknown_options

        unknown = unknown_options(extra)
        if unknown:
            parser.run_parser.error(f"unknown option {', '.join(unknown)}: neither "
                                    "conformance run nor pytest (with its plugins) has it")
        refused = refusal(args.platform, extra)
        if refused:
            print(f"conformance run: {refused}", file=sys.stderr)
            return 2
        return run(args, extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command in tiers_cli.COMMANDS:
        return tiers_cli.run(args)
    return {"verify": verify, "release": release, "plugins": plugins, "contracts": contracts,
            "pipeline": pipeline_cli.run, "matrix": matrix_cli.run, "init": init_cli.run}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
