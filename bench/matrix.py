"""How long ``conformance matrix build`` takes on a large set of records.

Generates RECORDS result records (default 1,000: 50 platform lines of 20 runs each)
over CONTRACTS generated contracts (default 300), one test each, a few percent of
them failing at random, then builds the matrix and writes the site three times and
prints the median of each phase:

    python bench/matrix.py [--records 1000] [--contracts 300]

The records are built by the same helper the matrix tests use
(``tests/matrix/generated_records.py``), so each one is a valid record of the
installed kit that ``conformance verify`` would check in full.
"""

from __future__ import annotations

import argparse
import datetime
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "matrix"))

from generated_records import make_record, write_record  # noqa: E402

from conformance.matrix.build import build_matrix  # noqa: E402
from conformance.matrix.site import write_site  # noqa: E402

SUITES = ("attention", "communicator", "engine", "platform", "worker")
RUNS_PER_LINE = 20


def contract_ids(count: int) -> list[str]:
    return [f"{SUITES[i % len(SUITES)]}.area{i // 50}.rule{i}" for i in range(count)]


def write_records(folder: Path, records: int, contracts: list[str]) -> None:
    rng = random.Random(13)
    start = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
    for index in range(records):
        line, run = divmod(index, RUNS_PER_LINE)
        results = {c: "failed" if rng.random() < 0.03 else "passed" for c in contracts}
        started = (start + datetime.timedelta(hours=run)).isoformat()
        write_record(folder, f"vendor{line}/run{run}.record.json", make_record(
            results, plugin=f"vendor{line}", device=f"Device {line}", started=started))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--contracts", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    contracts = contract_ids(args.contracts)
    mustpass = {c: f"generated rule {c}" for c in contracts}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "records"
        write_records(folder, args.records, contracts)
        phases: dict[str, list[float]] = {"build the model": [], "write the site": [], "total": []}
        for repeat in range(args.repeats):
            began = time.perf_counter()
            built = build_matrix([folder], mustpass=mustpass)
            modelled = time.perf_counter()
            write_site(built, Path(scratch) / f"site{repeat}")
            written = time.perf_counter()
            assert len(built.records) == args.records and not built.matrix.rejected
            phases["build the model"].append(modelled - began)
            phases["write the site"].append(written - modelled)
            phases["total"].append(written - began)
        size = sum(p.stat().st_size for p in (Path(scratch) / "site0").rglob("*") if p.is_file())
    print(f"{args.records} records x {args.contracts} contracts, "
          f"{args.records // RUNS_PER_LINE} platform lines; site {size / 2**20:.1f} MiB")
    print(tabulate([(phase, f"{statistics.median(times):.2f}", " ".join(f"{t:.2f}" for t in times))
                    for phase, times in phases.items()],
                   headers=["phase", f"median of {args.repeats} (s)", "runs (s)"]))


if __name__ == "__main__":
    main()
