"""The kit's generated files, written or checked by one command.

A change to the suites (a new contract, a reworded rule) changes files that are made
from them and shipped: the mustpass lists, the contract version each contract was
added in, the plugin guide's suite sections and the built-in ``cpu`` platform's
record in ``matrix/records/``. They are listed here once,
each with how it is made, so a maintainer runs one command::

    python -m conformance.dev regenerate           # write every stale generated file
    python -m conformance.dev regenerate --check   # exit 1 naming every stale one (CI)

A shipped record is stale when it is missing or was made by another kit (its version
or suite hash); writing it runs the kit against its platform (about a minute on two
cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from conformance._version import __version__
from conformance.results.provenance import suite_hash

REPO = Path(__file__).resolve().parent.parent
SHIPPED_RECORDS = REPO / "matrix" / "records"


@dataclasses.dataclass(frozen=True)
class Generated:
    """One generated file: how to tell it is current, and how to make it."""

    path: Path
    made_from: str
    is_current: Callable[[], bool]
    write: Callable[[], None]


def _text_file(path: Path, made_from: str, text: Callable[[], str]) -> Generated:
    def is_current() -> bool:
        return path.exists() and path.read_text(encoding="utf-8") == text()

    return Generated(path, made_from, is_current, lambda: path.write_text(text(), encoding="utf-8"))


def _shipped_record(path: Path) -> Generated:
    """A record the kit makes itself: its platform is the record's own folder name."""
    platform = path.parent.name

    def is_current() -> bool:
        try:
            provenance = json.loads(path.read_text(encoding="utf-8"))["provenance"]
        except (OSError, ValueError, KeyError):
            return False
        return (provenance.get("suite_hash"), provenance.get("kit_version")) == (suite_hash(), __version__)

    def write() -> None:
        command = [sys.executable, "-m", "conformance.cli", "run", "--platform", platform,
                   "--record", str(path.relative_to(REPO)), "-n", "2"]
        print(f"running {' '.join(command[2:])} (minutes)", flush=True)
        subprocess.run(command, cwd=REPO, check=False)

    return Generated(path, f"a run of the kit against {platform}", is_current, write)


def generated_files() -> list[Generated]:
    """Every generated file of the repository, in the order they must be made (the
    lists before the guide that quotes them, the records last)."""
    from conformance.bridges.vllm import profile
    from conformance.contract.version import CONTRACT_VERSION
    from conformance.results import since
    from conformance.scaffold import guide
    from conformance.suites import registry
    from conformance.tiers import interface

    files = [
        _text_file(registry.MUSTPASS_PATH, "the suites' contract markers and rules", registry.mustpass_text),
        _text_file(since.SINCE_PATH, "the suites' contracts, each new one at the current contract version",
                   lambda: since.since_text(registry.contracts(), CONTRACT_VERSION, since.SINCE_PATH)),
        *(_text_file(profile.path(name), "the suites and the vLLM promises in bridges/vllm/profile.py",
                     functools.partial(profile.profile_text, name)) for name in profile.profile_names()),
        _text_file(guide.GUIDE, "the suites' contracts and rules (between its markers)", guide.updated_guide),
        _text_file(interface.CURRENT, "the plugin contract's source (conformance/contract/)",
                   interface.current_text),
    ]
    # Named, not globbed: a deleted record is stale, not forgotten.
    files += [_shipped_record(SHIPPED_RECORDS / platform / f"{platform}.record.json") for platform in ("cpu",)]
    return files


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def regenerate(check: bool, out=sys.stdout, files: list[Generated] | None = None) -> int:
    """Write (or with ``check``, name) each stale one of ``files`` (every generated
    file by default); 1 when ``check`` found one stale."""
    stale = [generated for generated in (generated_files() if files is None else files)
             if not generated.is_current()]
    for generated in stale:
        where = _shown(generated.path)
        if check:
            print(f"stale: {where} (made from {generated.made_from})", file=out)
        else:
            print(f"writing {where} (from {generated.made_from})", file=out, flush=True)
            generated.write()
    if check and stale:
        print(f"{len(stale)} generated file(s) stale: run python -m conformance.dev regenerate", file=out)
        return 1
    if not stale:
        print("every generated file is current", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.dev",
                                     description="The kit's maintainer commands.")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("regenerate", help="write (or --check) every file generated from the suites")
    command.add_argument("--check", action="store_true",
                         help="write nothing; exit 1 naming each stale file")
    args = parser.parse_args(argv)
    return regenerate(args.check)


if __name__ == "__main__":
    sys.exit(main())
