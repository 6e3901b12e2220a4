"""``conformance pipeline``: print the Buildkite pipeline; and the commands its jobs run.

- ``conformance pipeline --fleet FILE`` (or ``--platform NAME --queue Q [--tag k=v]...``
  for one device) prints the pipeline as YAML to read, or as JSON (``--format json``)
  to upload: JSON has no typing questions (YAML 1.1 and 1.2 readers disagree on
  ``0o17``). Both are checked against Buildkite's schema and the extra rules of
  ``conformance.ci.buildkite.validate``.
- ``conformance pipeline preflight --platform P --expect-devices N --output FILE``:
  the ``pre-command`` hook's health check; exit 1 when the agent is unhealthy.
- ``conformance pipeline report RECORD --device NAME --exit-status N``: a device job
  annotates the build with its verdict and stores it as meta-data.
- ``conformance pipeline collect RESULTS --into DIR --device NAME...``: the collector
  writes the record that speaks for each device (latest attempt, shards merged).
- ``conformance pipeline gate RESULTS --required NAME... --soft-fail NAME RULE...``:
  the collector annotates every device's verdict; exit 1 if a required one fails.
- ``conformance pipeline annotate FILE --context C --style S``: annotate with a file
  (the matrix), cut to Buildkite's size limit.

Bad input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from conformance.ci.names import FleetError, check_name, shown

ERROR_EXIT = 2
#: Device fields that flags can set (argparse dest = field), and each one's flag.
FLAGS = {"platform": "--platform", "queue": "--queue", "name": "--name",
         "suites": "--suite", "device_count": "--device-count",
         "timeout_in_minutes": "--timeout", "expectations": "--expectations",
         "shared_device": "--shared-device", "soft_fail": "--soft-fail",
         "promote_when": "--promote-when"}


def _add_device_flags(parser: argparse.ArgumentParser) -> None:
    one = parser.add_argument_group(
        "one device without a fleet file (names: letters, digits, '_', '.', '-')")
    one.add_argument("--platform", metavar="NAME", help="the plugin's entry-point name")
    one.add_argument("--queue", metavar="QUEUE", help="the Buildkite queue of its agents")
    one.add_argument("--tag", action="append", metavar="KEY=VALUE", default=[],
                     help="another agent tag the job needs (repeatable)")
    one.add_argument("--name", metavar="NAME", help="the device's name (default: the platform)")
    one.add_argument("--suite", action="append", metavar="SUITE", dest="suites",
                     help="run only this suite (repeatable; default: every suite)")
    one.add_argument("--device-count", type=int, metavar="N",
                     help="devices per job; agents are tagged device_count=N (default 1)")
    one.add_argument("--timeout", type=int, metavar="MINUTES", dest="timeout_in_minutes")
    one.add_argument("--expectations", metavar="FILE", help="the plugin's expectations file")
    one.add_argument("--shared-device", metavar="NAME",
                     help="a physical device several agents share: one job at a time")
    one.add_argument("--soft-fail", action="store_true", default=None,
                     help="failures do not fail the build (needs --promote-when)")
    one.add_argument("--promote-when", metavar="RULE",
                     help="the rule after which a soft-fail device becomes required")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``pipeline`` on the ``conformance`` command's subparsers."""
    parser = subparsers.add_parser(
        "pipeline", help="print the Buildkite pipeline for a fleet of device agents",
        description="Print the Buildkite pipeline (validated against Buildkite's "
        "schema) for a fleet file or one device described by flags; pipe it to "
        "`buildkite-agent pipeline upload`.",
    )
    parser.add_argument("--fleet", metavar="FILE", help="the fleet file (TOML)")
    parser.add_argument("--collector-queue", metavar="QUEUE",
                        help="queue of the matrix step (default: the fleet's, else Buildkite's)")
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml")
    _add_device_flags(parser)
    actions = parser.add_subparsers(dest="pipeline_action", metavar="ACTION")

    check = actions.add_parser("preflight", help="(in pre-command) is this agent healthy?")
    check.add_argument("--platform", dest="preflight_platform", required=True, metavar="NAME")
    check.add_argument("--expect-devices", type=int, required=True, metavar="N")
    check.add_argument("--health-command", metavar="COMMAND", default="")
    check.add_argument("--health-timeout", type=float, default=120.0, metavar="SECONDS")
    check.add_argument("--output", type=Path, required=True, metavar="FILE")

    report = actions.add_parser("report", help="(in a device job) annotate its verdict")
    report.add_argument("record", type=Path, metavar="RECORD")
    report.add_argument("--device", required=True, metavar="NAME")
    report.add_argument("--exit-status", type=int, metavar="N",
                        help="what conformance run exited with")

    collect = actions.add_parser("collect", help="(in the collector) one record per device")
    collect.add_argument("results", type=Path, metavar="RESULTS")
    collect.add_argument("--into", type=Path, required=True, metavar="DIR")
    collect.add_argument("--device", action="append", default=[], dest="devices",
                         metavar="NAME")

    gate = actions.add_parser("gate", help="(in the collector) check every device's record")
    gate.add_argument("results", type=Path, metavar="RESULTS")
    gate.add_argument("--required", action="append", default=[], metavar="NAME")
    gate.add_argument("--conditional", action="append", default=[], metavar="NAME",
                      help="required when it ran; its step's `if` may have skipped it")
    gate.add_argument("--soft-fail", action="append", default=[], nargs=2,
                      metavar=("NAME", "RULE"))
    gate.add_argument("--sharded", action="append", default=[], metavar="NAME",
                      help="a device whose jobs each ran one shard: store its verdict")

    annotate = actions.add_parser("annotate", help="annotate the build with a Markdown file")
    annotate.add_argument("file", type=Path, metavar="FILE")
    annotate.add_argument("--context", required=True)
    annotate.add_argument("--style", choices=("success", "info", "warning", "error"),
                          default="info")
    return parser


def _fleet(args: argparse.Namespace):
    from conformance.ci.fleet import device_from_flags, load_fleet

    flags = {field: getattr(args, field) for field in FLAGS}
    given = sorted(FLAGS[field] for field, value in flags.items() if value is not None)
    if args.collector_queue:
        check_name(args.collector_queue, "--collector-queue")
    if args.fleet:
        if given or args.tag:
            raise FleetError(f"--fleet describes the devices; {(given or ['--tag'])[0]} "
                             "is for one device without a fleet file")
        fleet = load_fleet(args.fleet)
        if args.collector_queue:
            fleet = dataclasses.replace(fleet, collector_queue=args.collector_queue)
        return fleet
    if not args.platform or not args.queue:
        raise FleetError("give --fleet FILE, or --platform NAME and --queue QUEUE")
    tags = {}
    for tag in args.tag:
        name, equals, value = tag.partition("=")
        if not equals:
            raise FleetError(f"--tag {shown(tag)} must be KEY=VALUE")
        tags[name] = value
    return device_from_flags({**flags, "tags": tags or None}, args.collector_queue,
                             {**FLAGS, "tags": "--tag"})


def generate(args: argparse.Namespace) -> int:
    from conformance.ci.buildkite.pipeline import build_pipeline
    from conformance.ci.buildkite.validate import problems

    fleet = _fleet(args)
    for device in fleet.retired():
        reason = f": {device.retired_reason}" if device.retired_reason else ""
        print(f"conformance pipeline: no step for retired device {device.name!r} "
              f"(queue {device.queue!r}){reason}", file=sys.stderr)
    pipeline = build_pipeline(fleet)
    found = problems(pipeline.to_dict())
    if found:
        raise FleetError(f"the generated pipeline is not valid: {found[0]}"
                         + (f" (+{len(found) - 1} more)" if len(found) > 1 else ""))
    if args.format == "json":
        print(pipeline.to_json(indent=2))
    else:
        # A wide line, so that yaml never folds a command over two lines.
        print(pipeline.to_yaml(sort_keys=False, allow_unicode=True, width=10_000), end="")
    return 0


def _preflight(args: argparse.Namespace) -> int:
    from conformance.ci.preflight import preflight, write

    platform = check_name(args.preflight_platform, "--platform")
    found = preflight(platform, args.expect_devices, args.health_command or None,
                      args.health_timeout)
    write(found, args.output)
    for problem in found.problems:
        print(f"conformance preflight: agent unhealthy: {problem}", file=sys.stderr)
    if found.platform_problem:
        print(f"conformance preflight: not judged here, the run will report it: "
              f"{found.platform_problem}", file=sys.stderr)
    return 0 if found.healthy else 1


def _report(args: argparse.Namespace) -> int:
    from conformance.ci.buildkite.agent import BuildkiteAgent
    from conformance.ci.report import report

    device = check_name(args.device, "--device")
    report(args.record, device, args.exit_status, BuildkiteAgent())
    return 0


def _collect(args: argparse.Namespace) -> int:
    from conformance.ci.collect import RECORD_SUFFIX, collect, write_collected

    if not args.devices:
        raise FleetError("name the devices: --device NAME")
    for device in (check_name(name, "--device") for name in args.devices):
        collected = collect(args.results / device)
        if collected is None or collected.error is not None:
            why = "no record" if collected is None else collected.error
            print(f"conformance collect: {device}: nothing collected: {why}")
            continue
        write_collected(collected, args.into / device / f"{device}{RECORD_SUFFIX}")
        ignored = f" (not used: {', '.join(collected.ignored)})" if collected.ignored else ""
        print(f"conformance collect: {device}: {collected.source}{ignored}")
    return 0


def _gate(args: argparse.Namespace) -> int:
    from conformance.ci.buildkite.agent import BuildkiteAgent
    from conformance.ci.fleet import check_promotion
    from conformance.ci.gate import gate

    required = [check_name(name, "--required") for name in args.required]
    conditional = [check_name(name, "--conditional") for name in args.conditional]
    soft = [(check_name(name, "--soft-fail"), check_promotion(rule, "--soft-fail RULE"))
            for name, rule in args.soft_fail]
    if not required and not soft and not conditional:
        raise FleetError("name the devices: --required NAME, --conditional NAME or "
                         "--soft-fail NAME RULE")
    sharded = tuple(check_name(name, "--sharded") for name in args.sharded)
    return gate(args.results, required, soft, BuildkiteAgent(), sharded, conditional)


def _annotate(args: argparse.Namespace) -> int:
    from conformance.ci.buildkite.agent import BuildkiteAgent

    try:
        body = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FleetError(f"cannot read {args.file}: {getattr(exc, 'strerror', exc)}") from None
    BuildkiteAgent().annotate(body, check_name(args.context, "--context"), args.style)
    return 0


def run(args: argparse.Namespace) -> int:
    """Handle ``conformance pipeline``; bad input or a failed agent call is one line."""
    from conformance.ci.publish import PublishError

    handler = {None: generate, "preflight": _preflight, "report": _report,
               "collect": _collect, "gate": _gate,
               "annotate": _annotate}[args.pipeline_action]
    try:
        return handler(args)
    except (FleetError, PublishError) as exc:
        print(f"conformance pipeline: {exc}", file=sys.stderr)
        return ERROR_EXIT
