"""A set of generated records covering what the matrix must show.

Platform lines (plugin on device) and what each one's records are for:

- ``cpu`` on ``Test CPU``: four runs; ``FLAKY`` goes passed, failed, passed, failed
  (flaky, and a regression in the newest), ``REGRESSED`` fails only in the newest,
  ``RECOVERED`` fails once then passes.
- ``npu`` on ``NPU-9``: one run with every outcome, a waiver, and hostile text.
- ``gpu`` on ``GPU X``: an incomplete record of a killed run.
- ``old`` on ``Old Board``: a record older than the stale window.
- ``legacy`` on ``Legacy``: a record of an earlier release (older contract version)
  followed by one of the installed kit: listed, never diffed.
- ``retro`` on ``Retro``: a recent record of the earlier release only: stale by its
  contract version.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from generated_records import make_record, write_record

from conformance.matrix.kits import Kit
from conformance.results.verify import load_mustpass

NOW = datetime.datetime(2026, 11, 25, 12, 0, tzinfo=datetime.timezone.utc)
CONTRACTS = list(load_mustpass())
OLD_RELEASE = Kit("0.0.9", "0.0", "sha256:" + "9" * 64, frozenset(CONTRACTS))
FLAKY, REGRESSED, RECOVERED = "attention.forward.decode", "attention.forward.prefill", "worker.rpc.methods"
HOSTILE = "<img src=x onerror=alert(1)>"

#: In the npu record: one contract per outcome (skipped shows as not run).
NPU_OUTCOMES = {
    "attention.forward.mixed": [("failed", f"AssertionError: {HOSTILE} | `x` [y](javascript:alert(2))\nsecond line")],
    "attention.kv_cache.write": [("error", "fixture 'kv' raised RuntimeError")],
    "communicator.all_reduce.sum": [("crashed", "worker 'gw0' crashed while running the test")],
    "communicator.barrier.waits": [("timed_out", "the test ran past --test-timeout=300 s")],
    "attention.features.logits_soft_cap": [("not_supported", "logits_soft_cap not declared")],
    "attention.features.sliding_window": [("waived", f"waived: firmware 1.2 {HOSTILE} (https://example.com/bugs/12)")],
    "engine.parallel.tensor_parallel": [("waived", "waived: tp hangs (javascript:alert(3))")],
    "communicator.gather.dst_only": [("skipped", "needs 2 devices, found 1")],
}
NPU_ABSENT = "worker.memory.fraction"


def all_passed(**overrides) -> dict:
    return {**{c: "passed" for c in CONTRACTS}, **overrides}


def write_scenario(folder: Path) -> dict[str, Path]:
    paths = {}
    flaky_runs = [("passed", "passed", "failed"), ("failed", "passed", "failed"),
                  ("passed", "passed", "passed"), ("failed", "failed", "passed")]
    for day, (flaky, regressed, recovered) in zip((1, 5, 10, 20), flaky_runs):
        record = make_record(all_passed(**{FLAKY: flaky, REGRESSED: regressed, RECOVERED: recovered}),
                             started=f"2026-11-{day:02d}T08:00:00+00:00")
        paths[f"cpu-{day}"] = write_record(folder, f"cpu/run-{day}.record.json", record)

    npu = all_passed(**NPU_OUTCOMES)
    del npu[NPU_ABSENT]
    paths["npu"] = write_record(folder, "npu/npu.record.json", make_record(
        npu, plugin="npu", device="NPU-9", distribution=f"npu-plugin {HOSTILE}",
        started="2026-11-22T09:00:00+00:00", ci={"provider": "buildkite", "build_url": "javascript:alert(4)"},
        capabilities={"dtypes": ["bfloat16"], "head_sizes": [128], "block_sizes": [128],
                      "kv_cache_dtypes": ["auto"], "max_world_size": 1,
                      "features": ["sliding_window"]}))
    paths["gpu"] = write_record(folder, "gpu/killed.record.json", make_record(
        {c: "passed" for c in CONTRACTS[:10]}, plugin="gpu", device="GPU X", complete=False,
        started="2026-11-23T09:00:00+00:00",
        ci={"provider": "buildkite", "build_url": "https://buildkite.example/builds/7"}))
    paths["old"] = write_record(folder, "old/old.record.json", make_record(
        all_passed(), plugin="old", device="Old Board", started="2026-09-01T00:00:00+00:00"))
    paths["legacy-old"] = write_record(folder, "legacy/a.record.json", make_record(
        all_passed(**{FLAKY: "failed"}), plugin="legacy", device="Legacy", kit=OLD_RELEASE,
        started="2026-11-02T00:00:00+00:00", version="0.0.9"))
    paths["legacy-new"] = write_record(folder, "legacy/b.record.json", make_record(
        all_passed(), plugin="legacy", device="Legacy", started="2026-11-21T00:00:00+00:00"))
    paths["retro"] = write_record(folder, "retro/r.record.json", make_record(
        all_passed(), plugin="retro", device="Retro", kit=OLD_RELEASE,
        started="2026-11-24T00:00:00+00:00", version="0.0.9"))
    return paths


def column(matrix, plugin: str):
    return next(c for c in matrix.columns if c.plugin == plugin)


def history_of(matrix, plugin: str):
    return next(h for h in matrix.histories if h.plugin == plugin)
