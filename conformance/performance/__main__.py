"""``python -m conformance.performance --platform NAME [--output FILE]``: measure the
headline figures of a platform (``headline.py`` says which) and print them; with
``--output``, write the record's ``performance`` section there as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from conformance.contract.discovery import PlatformPluginError, load_platform
from conformance.performance.headline import measure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.performance", description=__doc__)
    parser.add_argument("--platform", required=True, metavar="NAME", help="the platform plugin's entry-point name")
    parser.add_argument("--output", metavar="FILE", help="write the performance section here as JSON")
    args = parser.parse_args(argv)
    try:
        platform = load_platform(args.platform)
    except PlatformPluginError as exc:
        print(f"{type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    section = measure(platform, say=lambda line: print(line, flush=True))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(section, file, indent=1)
    else:
        print(json.dumps(section, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
