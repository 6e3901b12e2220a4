"""The kit's own mutation score: how many single-site bugs in the reference components
a plugin replaces do the suites catch?

Each component of the ``cpu`` platform that a vendor writes again (its runtime
methods, communicator, custom ops, attention backend, worker) is mutated one change at
a time (``bench/mutants.py``). Each mutant becomes a plugin of its own, installed as
pip leaves one: the mutated module under another name and a platform that selects it
(the kit still judges with the unmutated reference). The suites that drive the
component run against it, stopping at the first failing test (the worker's are the
Worker suite and the Engine suite, whose engine runs the platform's worker, in two
ranks too; the attention backend's run with its C kernel and again without, where
the module's torch path computes); a mutant is killed when the run
fails, the plugin is refused or the run exceeds its limit. Survivors are bugs the
suites miss, unless ``bench/mutation_equivalents.toml`` shows they change nothing
observable.

    python bench/mutation.py --component communicator --limit 20
    python bench/mutation.py --shard 3/8          # one agent's share of every mutant
    python bench/mutation.py --list               # the mutants, without running them

Each component first runs its unmutated copy, which must pass: otherwise its mutants
would prove nothing, and the component is reported and skipped.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tomllib
from mutants import Mutant, apply, mutants_of
from tabulate import tabulate

from conformance.reference_engine.kernels.cpu import native
from conformance.results.sharding import ShardError, parse_shard, shard_of

EQUIVALENTS = Path(__file__).with_name("mutation_equivalents.toml")
#: The mutant's module, importable under this name in the run and its rank processes.
MUTANT_PACKAGE = "kit_mutant"
_PLATFORM = "conformance.reference_engine.platforms.cpu"


#: Where the reference runs its C kernels, and where it cannot build them: the paths
#: a module takes on either host are each the reference's behaviour somewhere.
EITHER_KERNEL_PATH = {"C kernels": {}, "torch path": {native.ENV_SWITCH: "0"}}


@dataclasses.dataclass(frozen=True)
class Component:
    """A module of the reference that a plugin replaces, the suites (comma-separated,
    as ``--suite`` takes them; and a ``-k`` selection) that drive it, and how the
    mutant platform selects the mutated copy: ``platform`` (it is the platform),
    ``custom_ops`` (``custom_ops_module``) or the name of the platform factory
    returning a qualname in it. ``hosts`` names the environments the suites run in
    (a mutant is killed when it fails in any; each after the first runs only for a
    mutant the ones before left alive)."""

    module: str
    suites: str
    selection: str | None
    wiring: str
    hosts: dict[str, dict[str, str]] = dataclasses.field(default_factory=lambda: {"this host": {}})


COMPONENTS = {
    "platform": Component(_PLATFORM, "platform", None, "platform"),
    "communicator": Component("conformance.reference_engine.distributed.torch_communicator",
                              "communicator", None, "get_device_communicator_cls"),
    "custom_ops": Component("conformance.reference_engine.kernels.cpu.ops", "platform",
                            "platform.custom_ops", "custom_ops"),
    "attention": Component("conformance.reference_engine.attention.cpu_attn", "attention", None,
                           "get_attn_backend_cls", EITHER_KERNEL_PATH),
    "worker": Component("conformance.reference_engine.worker.worker", "worker,engine", None,
                        "get_worker_cls"),
}


def _platform_source(component: Component) -> str:
    """The mutant plugin's platform module: ``register()`` names its platform, as a
    plugin's entry point does."""
    register = f"\n\ndef register():\n    return {MUTANT_PACKAGE + '.platform.MutantPlatform'!r}\n"
    if component.wiring == "platform":
        return f"from {MUTANT_PACKAGE}.target import CpuPlatform as MutantPlatform\n" + register
    head = f"from {_PLATFORM} import CpuPlatform\n\n\nclass MutantPlatform(CpuPlatform):\n"
    if component.wiring == "custom_ops":
        return head + f"    custom_ops_module = {MUTANT_PACKAGE + '.target'!r}\n" + register
    return head + (
        "    @classmethod\n"
        f"    def {component.wiring}(cls, *args):\n"
        f"        return super().{component.wiring}(*args).replace({component.module!r}, "
        f"{MUTANT_PACKAGE + '.target'!r})\n") + register


def install_mutant(site: Path, component: Component, source: str) -> None:
    """Make ``site`` hold the mutant as an installed plugin named ``mutant``."""
    package = site / MUTANT_PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "target.py").write_text(source)
    (package / "platform.py").write_text(_platform_source(component))
    dist_info = site / "kit_mutant-0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: kit-mutant\nVersion: 0\n")
    (dist_info / "entry_points.txt").write_text(
        f"[conformance.platform_plugins]\nmutant = {MUTANT_PACKAGE}.platform:register\n")


@dataclasses.dataclass
class Outcome:
    killed: bool
    how: str
    seconds: float


def run_suite(component: Component, source: str, limit_s: float | None) -> Outcome:
    """The component's suites against ``source`` as a plugin in each of its hosts, until
    one fails."""
    seconds = 0.0
    for host, overlay in component.hosts.items():
        outcome = _run_on_host(component, source, overlay, limit_s)
        seconds += outcome.seconds
        if outcome.killed:
            where = f" ({host})" if len(component.hosts) > 1 else ""
            return Outcome(True, outcome.how + where, seconds)
    return Outcome(False, "passed", seconds)


def _run_on_host(component: Component, source: str, overlay: dict[str, str],
                 limit_s: float | None) -> Outcome:
    """The component's suites against ``source``, stopping at the first failure."""
    with tempfile.TemporaryDirectory(prefix="kit-mutant-") as folder:
        site = Path(folder) / "site"
        install_mutant(site, component, source)
        command = [sys.executable, "-m", "pytest", "--platform=mutant", f"--suite={component.suites}",
                   "-x", "-q", "-p", "no:cacheprovider", "--rank-timeout=30", "--test-timeout=120",
                   "--conformance-record=mutant.record.json"]
        if component.selection:
            command += ["-k", component.selection]
        env = {**os.environ, **overlay, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
        started = time.perf_counter()
        try:
            run = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                                 timeout=limit_s)
        except subprocess.TimeoutExpired:
            return Outcome(True, "past its limit", time.perf_counter() - started)
        seconds = time.perf_counter() - started
    if run.returncode == 0:
        return Outcome(False, "passed", seconds)
    how = {1: "a test failed", 4: "plugin refused"}.get(run.returncode, f"exit {run.returncode}")
    return Outcome(True, how, seconds)


@dataclasses.dataclass(frozen=True)
class Equivalents:
    """Survivors shown to change nothing observable: single changes ``(component,
    line, change)``, and whole spans of lines ``(component, first, last)`` where every
    change does (code that only picks between correct paths, or that no plugin
    reaches)."""

    changes: frozenset[tuple[str, int, str]] = frozenset()
    spans: tuple[tuple[str, int, int], ...] = ()

    def __contains__(self, survivor: tuple[str, int, str]) -> bool:
        component, line, _ = survivor
        return survivor in self.changes or any(
            name == component and first <= line <= last for name, first, last in self.spans)


def load_equivalents() -> Equivalents:
    if not EQUIVALENTS.exists():
        return Equivalents()
    entries = tomllib.loads(EQUIVALENTS.read_text())["equivalent"]
    return Equivalents(
        frozenset((e["component"], e["line"], e["change"]) for e in entries if "line" in e),
        tuple((e["component"], *e["lines"]) for e in entries if "lines" in e))


def _source_of(module: str) -> tuple[Path, str]:
    path = Path(importlib.util.find_spec(module).origin)
    return path, path.read_text()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--component", action="append", choices=sorted(COMPONENTS),
                        help="mutate only this component (repeatable; default: all)")
    parser.add_argument("--limit", type=int, help="at most this many mutants per component (the first)")
    parser.add_argument("--shard", metavar="K/N", help="run only shard K of N of the mutants")
    parser.add_argument("--list", action="store_true", help="print the mutants and run nothing")
    args = parser.parse_args()
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ShardError as error:
        parser.error(str(error))
    equivalents = load_equivalents()
    rows, survivors = [], []
    for name in args.component or list(COMPONENTS):
        component = COMPONENTS[name]
        path, source = _source_of(component.module)
        chosen = mutants_of(source)[:args.limit]
        if shard:
            chosen = [m for m in chosen if shard_of(f"{name}:{m.index}:{m.what}", shard[1]) == shard[0]]
        where = path.relative_to(Path(__file__).resolve().parent.parent)
        if args.list:
            print("\n".join(f"{name} {where}:{m.line} {m.what}" for m in chosen))
            continue
        row, lost = _score(name, component, source, chosen, str(where), equivalents)
        rows.append(row)
        survivors += lost
    if not args.list:
        print(tabulate(rows, headers=["component", "mutants", "killed", "survived", "equivalent",
                                      "kill rate", "median s/mutant", "total s"]))
        print("\nsurvivors (bugs no suite caught):" if survivors else "\nno survivor")
        print("\n".join(survivors))
    return 0


def _score(name: str, component: Component, source: str, chosen: list[Mutant], where: str,
           equivalents: Equivalents) -> tuple[list, list[str]]:
    baseline = run_suite(component, source, None)
    if baseline.killed:
        print(f"{name}: the unmutated copy does not pass ({baseline.how}); its mutants are not run",
              file=sys.stderr)
        return [name, len(chosen), "-", "-", "-", "baseline fails", "-", f"{baseline.seconds:.0f}"], []
    # A mutant past several times the clean run is a hang, not a slow machine.
    limit_s = max(120.0, 5 * baseline.seconds)
    killed, equivalent, lost, seconds = 0, 0, [], []
    for count, mutant in enumerate(chosen, 1):
        outcome = run_suite(component, apply(source, mutant), limit_s)
        seconds.append(outcome.seconds)
        print(f"{name} {count}/{len(chosen)} {where}:{mutant.line} {mutant.what}: "
              f"{'killed, ' + outcome.how if outcome.killed else 'survived'} ({outcome.seconds:.1f} s)",
              file=sys.stderr, flush=True)
        if outcome.killed:
            killed += 1
        elif (name, mutant.line, mutant.what) in equivalents:
            equivalent += 1
        else:
            lost.append(f"{name} {where}:{mutant.line} {mutant.what}")
    judged = killed + len(lost)
    rate = f"{100 * killed / judged:.0f}%" if judged else "-"
    median = f"{statistics.median(seconds):.1f}" if seconds else "-"
    return [name, len(chosen), killed, len(lost), equivalent, rate, median,
            f"{sum(seconds) + baseline.seconds:.0f}"], lost


if __name__ == "__main__":
    sys.exit(main())
