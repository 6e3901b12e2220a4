"""``conformance init PATH --name NAME [--device-type TYPE] [--from-reference]``: write
a plugin package to start from (``plugin``). Bad input is one line on stderr and exit
status 2, with nothing written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ERROR_EXIT = 2


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``init`` on the ``conformance`` command's subparsers."""
    parser = subparsers.add_parser(
        "init", help="write a platform plugin package to start from",
        description="Write a plugin package: pyproject.toml with the entry point, a platform "
        "on TorchDevicePlatform, attention backend and communicator stubs to fill in, an "
        "expectations file, a CI fleet entry, a README and a test folder.")
    parser.add_argument("path", metavar="PATH", help="a new or empty folder")
    parser.add_argument("--name", required=True,
                        help="the plugin's name (a Python identifier): entry point and package")
    parser.add_argument("--device-type", default="cpu", metavar="TYPE",
                        help="the torch device type of the device (default: cpu)")
    parser.add_argument("--from-reference", action="store_true",
                        help="use the reference engine's attention backend and communicator "
                        "(cpu or cuda), and on cpu its host runtime for what torch.cpu "
                        "lacks: the package passes the suites as written")
    return parser


def run(args: argparse.Namespace) -> int:
    from conformance.scaffold.plugin import InitError, check_spec, runtime_gaps, write_plugin

    path = Path(args.path)
    try:
        spec = check_spec(args.name, args.device_type, args.from_reference)
        written = write_plugin(path, spec)
    except InitError as exc:
        print(f"conformance init: {exc}", file=sys.stderr)
        return ERROR_EXIT
    print(f"wrote the {spec.name} plugin package ({len(written)} files) in {path}")
    gaps = runtime_gaps(spec.device_type)
    if gaps is None:
        print(f"torch.{spec.device_type} is not importable here: once it is, "
              f"{spec.class_prefix}Platform.missing_runtime() lists what it lacks")
    elif gaps and not (spec.from_reference and spec.device_type == "cpu"):
        print(f"torch.{spec.device_type} lacks what these need, stubbed in platform.py: "
              + ", ".join(f"{g.method} ({g.lacks})" for g in gaps))
    print(f"next: pip install -e {path} && conformance run --platform {spec.name}")
    return 0
