"""How ``conformance matrix build`` scales: build time, peak memory and site size.

Generates result records (20 runs per platform line, CONTRACTS generated contracts,
one test each, a few percent failing at random) and measures, each case in a fresh
process so its peak RSS is its own:

- ``full``: RECORDS records (default 1,000) built into a site with no index, the
  median of REPEATS builds;
- ``ingest``: INGEST records (default 10,000) judged into an empty index file;
- ``incremental``: one new record added to those INGEST, built with that index into
  the site of the one before (the median of REPEATS);
- ``browser`` (with ``--browser``): headless Chromium's load time of the overview and
  of the cross-platform grid of a site of BROWSER_LINES platforms (default 250).

    python bench/matrix.py [--records 1000] [--ingest 10000] [--contracts 300] [--keep DIR]

``--keep DIR`` keeps the last site of each case under DIR, for a look in a browser.
The records are built by the helper the matrix tests use
(``tests/matrix/generated_records.py``): each one verifies as a real one would.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
# The checkout's kit, not an installed one: the benchmark measures this source tree.
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "matrix")]

from generated_records import make_record, write_record  # noqa: E402

from conformance.matrix.build import build_matrix  # noqa: E402
from conformance.matrix.kits import Kit, KnownKits, installed_kit  # noqa: E402
from conformance.matrix.site import write_site  # noqa: E402

SUITES = ("attention", "communicator", "engine", "platform", "worker")
RUNS_PER_LINE = 20
START = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
#: Chromium as Debian packages it (the browser test uses the same binary).
CHROMIUM = "/usr/lib/chromium/chromium"


def contract_ids(count: int) -> list[str]:
    return [f"{SUITES[i % len(SUITES)]}.area{i // 50}.rule{i}" for i in range(count)]


def benchmarked_kit(identity: str | None = None) -> Kit:
    """The checkout's kit; in a case's process, the one the parent read (``identity``,
    as ``kit_identity`` writes it): a working tree being edited may change its suites
    or version between writing the records and building them."""
    if identity is None:
        return installed_kit()
    version, contract_version, suite_hash = json.loads(identity)
    return Kit(version, contract_version, suite_hash, installed_kit().contracts)


def kit_identity(kit: Kit) -> str:
    return json.dumps([kit.version, kit.contract_version, kit.suite_hash])


def write_records(folder: Path, first: int, count: int, contracts: list[str], kit: Kit,
                  runs_per_line: int = RUNS_PER_LINE) -> None:
    """Records number ``first`` to ``first + count``: record i is run i % runs of line
    i // runs, an hour after the run before it."""
    for index in range(first, first + count):
        rng = random.Random(index)
        line, run = divmod(index, runs_per_line)
        results = {c: "failed" if rng.random() < 0.03 else "passed" for c in contracts}
        started = (START + datetime.timedelta(hours=run)).isoformat()
        write_record(folder, f"vendor{line}/run{run}.record.json", make_record(
            results, plugin=f"vendor{line}", device=f"Device {line}", started=started, kit=kit))


def site_figures(site: Path) -> dict:
    files = [p for p in site.rglob("*") if p.is_file()]
    pages = [p for p in files if p.suffix == ".html"]
    return {"site_mib": sum(p.stat().st_size for p in files) / 2**20,
            "largest_html_kib": max(p.stat().st_size for p in pages) / 2**10}


def run_case(args: argparse.Namespace) -> dict:
    """One case, in this process; prints its figures as JSON."""
    folder, work = Path(args.folder), Path(args.work)
    contracts = contract_ids(args.contracts)
    mustpass = {c: f"generated rule {c}" for c in contracts}
    now = START + datetime.timedelta(days=30)
    index = work / "index.sqlite" if args.case != "full" else None
    kit = benchmarked_kit(args.kit)
    if args.case == "incremental":  # the next nightly run of the first platform line
        started = (START + datetime.timedelta(hours=RUNS_PER_LINE + args.repeat_number)).isoformat()
        write_record(folder, f"vendor0/new{args.repeat_number}.record.json", make_record(
            {c: "passed" for c in contracts}, plugin="vendor0", device="Device 0", started=started, kit=kit))
    # The kit counts as released, as a published matrix's kit is, even where the
    # checkout's suites differ from the last release's.
    kits = KnownKits(kit, (kit,))
    began = time.perf_counter()
    built = build_matrix([folder], mustpass=mustpass, now=now, index=index, kits=kits)
    site = write_site(built, work / "site")
    seconds = time.perf_counter() - began
    assert not built.matrix.rejected, built.matrix.rejected[:1]
    return {"seconds": seconds, "records": len(built.records), "judged": built.judged,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "workers_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            **site_figures(site)}


def in_child(case: str, folder: Path, work: Path, args: argparse.Namespace, repeat: int = 0) -> dict:
    command = [sys.executable, __file__, "--run-case", case, "--folder", str(folder), "--work", str(work),
               "--contracts", str(args.contracts), "--ingest", str(args.ingest),
               "--repeat-number", str(repeat), "--kit", args.kit]
    # Each case starts with the disk settled: the case before may leave a gigabyte of
    # site still being written back, which a nightly build, hours after the last, never
    # meets.
    os.sync()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"bench/matrix.py: the {case} case failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def browser_load_ms(site: Path, page_names: list[str], repeats: int) -> dict[str, float]:
    """Median load time (navigation start to the load event) of each page."""
    from playwright.sync_api import sync_playwright

    medians = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for name in page_names:
            times = []
            for _ in range(repeats):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto((site / name).as_uri(), wait_until="load")
                times.append(page.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return n.loadEventEnd - n.startTime; }"))
                page.close()
            medians[name] = statistics.median(times)
        browser.close()
    return medians


def median_row(name: str, records: int, runs: list[dict]) -> list:
    seconds = [r["seconds"] for r in runs]
    return [name, f"{records:,}", f"{statistics.median(seconds):.2f}", " ".join(f"{s:.2f}" for s in seconds),
            f"{max(r['peak_rss_mb'] for r in runs):.0f}", f"{max(r['workers_peak_rss_mb'] for r in runs):.0f}",
            f"{runs[-1]['site_mib']:.1f}", f"{runs[-1]['largest_html_kib']:.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--ingest", type=int, default=10_000)
    parser.add_argument("--contracts", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="also time Chromium loading the pages")
    parser.add_argument("--browser-lines", type=int, default=250)
    parser.add_argument("--keep", metavar="DIR", help="keep each case's last site under DIR")
    parser.add_argument("--run-case", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--repeat-number", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--kit", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_case:
        args.case = args.run_case
        print(json.dumps(run_case(args)))
        return
    contracts = contract_ids(args.contracts)
    kit = benchmarked_kit()
    args.kit = kit_identity(kit)
    rows, loads = [], {}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        small, large = scratch / "small", scratch / "large"
        write_records(small, 0, args.records, contracts, kit)
        full = [in_child("full", small, scratch / f"full{i}", args) for i in range(args.repeats)]
        rows.append(median_row("full build, no index", args.records, full))
        write_records(large, 0, args.ingest, contracts, kit)
        ingest = in_child("ingest", large, scratch / "large-work", args)
        rows.append(median_row("ingest into an empty index", args.ingest, [ingest]))
        incremental = [in_child("incremental", large, scratch / "large-work", args, i)
                       for i in range(args.repeats)]
        rows.append(median_row("one new record, warm index", args.ingest + args.repeats, incremental))
        if args.browser:
            wide = scratch / "wide"
            write_records(wide, 0, args.browser_lines, contracts, kit, runs_per_line=1)
            in_child("full", wide, scratch / "wide-work", args)
            loads = browser_load_ms(scratch / "wide-work" / "site", ["index.html", "grid/1.html"], args.repeats)
        if args.keep:
            for name in ("full0", "large-work", "wide-work"):
                if (scratch / name / "site").is_dir():
                    shutil.copytree(scratch / name / "site", Path(args.keep) / name, dirs_exist_ok=True)
    print(f"{args.contracts} contracts, {RUNS_PER_LINE} runs per platform line")
    print(tabulate(rows, headers=["case", "records", "median (s)", "runs (s)", "peak RSS (MB)",
                                  "pool workers' peak RSS (MB)", "site (MiB)", "largest HTML (KiB)"]))
    for name, ms in loads.items():
        print(f"Chromium load of {name} ({args.browser_lines} platforms): median {ms:.0f} ms")


if __name__ == "__main__":
    main()
