"""Which record speaks for a device: retries by the record's retry count, then its
own start time, never by mtime; shards merged; a missing shard INCOMPLETE; names that would collide with
generated keys refused when the fleet is read."""

from __future__ import annotations

import json
import os

import pytest
from ci_helpers import agent_env, conformance, write_fleet
from ci_records import write_record

from conformance.ci.collect import collect
from conformance.ci.fleet import load_fleet
from conformance.ci.names import FleetError
from conformance.ci.verdicts import device_verdict
from conformance.results.verify import load_mustpass, verify_loaded

FIRST = next(iter(load_mustpass()))


def attempt(folder, job, started_at, outcomes=None, shard=None, complete=True,
            retry_count=None):
    """A record of job ``job`` that says it started at ``started_at`` (and, given
    ``retry_count``, that CI ran it as that attempt)."""
    path = write_record(folder / f"{job}.record.json", outcomes, complete=complete)
    record = json.loads(path.read_text())
    record["provenance"]["started_at"] = started_at
    if shard is not None:
        record["provenance"]["command_line"] = ["conformance", "run", "--shard", shard]
    if retry_count is not None:
        record["provenance"]["ci"] = {"provider": "buildkite", "job_id": job,
                                      "retry_count": retry_count}
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("touched_last", ["first", "retry"])
def test_a_retry_wins_over_a_truncated_first_attempt_whatever_the_mtimes(tmp_path, touched_last):
    folder = tmp_path / "results" / "cpu"
    first = attempt(folder, "job-a", "2026-01-01T10:00:00+00:00")
    first.write_text(first.read_text()[:200])  # cut off as a lost agent leaves it
    retry = attempt(folder, "job-b", "2026-01-01T10:30:00+00:00")
    newest, oldest = (first, retry) if touched_last == "first" else (retry, first)
    os.utime(oldest, (1, 1))
    os.utime(newest, (2_000_000_000, 2_000_000_000))
    verdict = device_verdict(tmp_path / "results", "cpu")
    assert verdict.word == "conformant", verdict.line
    assert "not used: job-a.record.json" in verdict.line


@pytest.mark.parametrize("touched_last", ["first", "retry"])
def test_the_later_attempt_decides_not_the_later_download(tmp_path, touched_last):
    folder = tmp_path / "results" / "cpu"
    first = attempt(folder, "job-z", "2026-01-01T10:00:00+00:00")  # conformant
    retry = attempt(folder, "job-a", "2026-01-01T11:00:00+00:00", {FIRST: "crashed"})
    newest = first if touched_last == "first" else retry
    os.utime(newest, (2_000_000_000, 2_000_000_000))
    assert device_verdict(tmp_path / "results", "cpu").word == "not-conformant"


@pytest.mark.parametrize("touched_last", ["first", "retry"])
def test_the_retry_count_decides_before_the_clocks_of_the_agents(tmp_path, touched_last):
    """The retry ran on an agent whose clock is an hour behind the first attempt's:
    its own start time says it came first, its retry count says it came last."""
    folder = tmp_path / "results" / "cpu"
    first = attempt(folder, "job-b", "2026-01-01T11:00:00+00:00", {FIRST: "crashed"},
                    retry_count=0)
    retry = attempt(folder, "job-a", "2026-01-01T10:05:00+00:00", retry_count=1)
    newest = first if touched_last == "first" else retry
    os.utime(newest, (2_000_000_000, 2_000_000_000))
    verdict = device_verdict(tmp_path / "results", "cpu")
    assert verdict.word == "conformant", verdict.line
    assert "not used: job-b.record.json" in verdict.line


def test_each_shard_takes_its_own_latest_attempt_and_the_merge_names_it(tmp_path):
    folder = tmp_path / "results" / "cpu"
    contracts = list(load_mustpass())
    for job, shard, retry, outcome in [("job-1a", "1/2", 0, "crashed"), ("job-1b", "1/2", 1, None),
                                       ("job-2a", "2/2", 0, None)]:
        path = attempt(folder, job, "2026-01-01T10:00:00+00:00",
                       {contracts[0]: outcome} if outcome else None, shard, retry_count=retry)
        record = json.loads(path.read_text())
        mine = contracts[::2] if shard == "1/2" else contracts[1::2]
        record["tests"] = [t for t in record["tests"] if t["contract"] in mine]
        record["provenance"]["ci"]["agent_name"] = f"agent-{job}"
        record["provenance"]["device"]["preflight"] = {"health_output": f"driver of {job}\n"}
        path.write_text(json.dumps(record))
    collected = collect(folder)
    assert verify_loaded(collected.record, collected.source).exit_code == 0
    assert collected.ignored == ("job-1a.record.json",)
    assert collected.record["provenance"]["shards"]["records"] == [
        {"index": index, "file": f"{job}.record.json", "job_id": job, "retry_count": retry,
         "agent_name": f"agent-{job}", "preflight": {"health_output": f"driver of {job}\n"}}
        for index, job, retry in [(1, "job-1b", 1), (2, "job-2a", 0)]]


def test_only_an_unreadable_record_is_invalid_not_missing(tmp_path):
    folder = tmp_path / "results" / "cpu"
    folder.mkdir(parents=True)
    (folder / "job-a.record.json").write_text("{")
    assert device_verdict(tmp_path / "results", "cpu").word == "invalid"


def shard_records(tmp_path, outcomes=None):
    folder = tmp_path / "results" / "cpu"
    contracts = list(load_mustpass())
    halves = {"1/2": contracts[::2], "2/2": contracts[1::2]}
    for index, (shard, mine) in enumerate(halves.items()):
        path = write_record(folder / f"job-{index}.record.json", outcomes)
        record = json.loads(path.read_text())
        record["tests"] = [t for t in record["tests"] if t["contract"] in mine]
        record["provenance"]["command_line"] = ["conformance", "run", "--shard", shard]
        path.write_text(json.dumps(record))
    return folder


def test_two_shards_merge_into_one_record_verify_accepts(tmp_path):
    folder = shard_records(tmp_path)
    collected = collect(folder)
    verdict = verify_loaded(collected.record, collected.source)
    assert verdict.exit_code == 0, verdict.line
    shards = collected.record["provenance"]["shards"]
    assert shards["count"] == 2 and shards["missing"] == []
    assert [r["file"] for r in shards["records"]] == ["job-0.record.json", "job-1.record.json"]


def test_a_missing_shard_makes_the_merged_record_incomplete(tmp_path):
    folder = shard_records(tmp_path)
    (folder / "job-1.record.json").unlink()
    verdict = device_verdict(tmp_path / "results", "cpu")
    assert verdict.word == "incomplete", verdict.line
    assert collect(folder).record["provenance"]["shards"]["missing"] == [2]


def test_the_collect_command_writes_one_record_per_device(tmp_path):
    shard_records(tmp_path)
    result = conformance("pipeline", "collect", str(tmp_path / "results"), "--into",
                         str(tmp_path / "collected"), "--device", "cpu", "--device", "npu",
                         env=agent_env(tmp_path / "store"))
    assert result.returncode == 0, result.stderr
    assert "npu: nothing collected: no record" in result.stdout
    merged = tmp_path / "collected" / "cpu" / "cpu.record.json"
    assert conformance("verify", str(merged)).returncode == 0


@pytest.mark.parametrize("names, culprit", [
    (["pipeline"], "the step key 'conformance-pipeline', which is the upload step"),
    (["matrix"], "the step key 'conformance-matrix', which is the collector step"),
    (["gate"], "the annotation context 'conformance-gate', which is the gate's summary"),
    (["test-engine"], "the step key 'conformance-test-engine'"),
    (["cpu", "CPU"], "device 'CPU' would have the step key 'conformance-CPU', which is "
                     "device 'cpu''s"),
    (["cpu-shard-1", "cpu"], "'conformance-cpu-shard-1', which is device 'cpu-shard-1''s"),
])
def test_a_name_colliding_with_a_generated_one_is_refused_in_one_line(tmp_path, names, culprit):
    tables = "".join(f'[[device]]\nname = "{name}"\nplatform = "cpu"\nqueue = "cpu"\n'
                     + ("parallelism = 2\n" if name == "cpu" else "") for name in names)
    with pytest.raises(FleetError) as raised:
        load_fleet(write_fleet(tmp_path, tables))
    assert culprit in str(raised.value) and "\n" not in str(raised.value)
