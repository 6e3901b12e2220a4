"""The vllm mustpass profile: generated and current, and what a bridged record is
judged on (no vLLM needed: the records are written here)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conformance.bridges.vllm import profile
from conformance.contract.discovery import find_plugin, load_platform
from conformance.pytest_plugin.provenance import collect_provenance
from conformance.results import verify_record
from conformance.results.record import RecordedTest, RecordWriter
from conformance.results.verify import CONFORMANT, INVALID, NOT_CONFORMANT, load_mustpass


def test_shipped_profile_is_current():
    """``mustpass-vllm.json`` is what ``python -m conformance.dev regenerate`` makes
    from the suites now."""
    assert profile.path().read_text() == profile.profile_text()


def test_profile_is_a_part_of_the_mustpass_list():
    promised = load_mustpass("vllm")
    assert promised and promised.keys() < load_mustpass().keys()
    assert not any(c.startswith("worker.") for c in promised)  # vLLM's worker does not map


@pytest.fixture
def bridged_writer(tmp_path):
    """A record as a bridged run writes it (a cpu platform standing in for vLLM's)."""
    entry = dataclasses.replace(find_plugin("cpu"), name="vllm:cpu", bridge={
        "interface": "vllm", "version": "0.32.0", "supported_versions": ">=0.32.0,<0.33",
        "profile": "vllm"})
    return RecordWriter(tmp_path / "r.json", collect_provenance(entry, load_platform("cpu"), ["pytest"]))


def _write(writer, outcome_of) -> None:
    for index, contract in enumerate(load_mustpass()):
        writer.add(RecordedTest(f"t.py::test_{index}", contract, outcome_of(contract), 0.1))
    writer.finish(0)


def test_bridged_record_is_judged_by_its_profile(bridged_writer):
    """Failures outside the profile are shown as the kit's stricter rules and do not
    decide the verdict; the record names the profile."""
    stricter = "platform.runtime.current_device"
    assert stricter not in load_mustpass("vllm")
    _write(bridged_writer, lambda c: "failed" if c == stricter else "passed")
    record = json.loads(bridged_writer.path.read_text())
    assert record["provenance"]["mustpass_profile"] == "vllm"
    verdict = verify_record(bridged_writer.path)
    assert verdict.exit_code == CONFORMANT, verdict.line
    assert "under the vllm mustpass profile" in verdict.line
    assert f"the kit's stricter rules, outside the profile, not passed: 1 ({stricter}: failed)" in verdict.line


def test_profile_failure_decides_the_verdict(bridged_writer):
    _write(bridged_writer, lambda c: "failed" if c == "communicator.reduce_scatter.dims" else "passed")
    verdict = verify_record(bridged_writer.path)
    assert verdict.exit_code == NOT_CONFORMANT and "communicator.reduce_scatter.dims: failed" in verdict.line


def test_the_verdict_names_the_plugin_s_config_changes(tmp_path):
    """A bridged record whose plugin's hook changed the kit's requests: the verdict
    says so once, with the first changes."""
    changes = [f"float32, blocks of {size}, KV-cache dtype 'auto': model_config.dtype torch.float32 -> "
               "torch.bfloat16" for size in (32, 64, 128, 256)]
    entry = dataclasses.replace(find_plugin("cpu"), name="vllm:dtype_hook", bridge={
        "interface": "vllm", "version": "0.32.0", "supported_versions": ">=0.32.0,<0.33",
        "profile": "vllm", "config_changes": changes})
    writer = RecordWriter(tmp_path / "r.json", collect_provenance(entry, load_platform("cpu"), ["pytest"]))
    _write(writer, lambda c: "failed" if c == "engine.generate.fp32_greedy" else "passed")
    verdict = verify_record(writer.path)
    assert verdict.exit_code == NOT_CONFORMANT, verdict.line
    assert (f"; the plugin's config hook changes the kit's requests: 4 ({', '.join(changes[:3])} and 1 more)"
            in verdict.line)


def test_unknown_profile_is_invalid(bridged_writer):
    _write(bridged_writer, lambda c: "passed")
    record = json.loads(bridged_writer.path.read_text())
    record["provenance"]["mustpass_profile"] = "nosuch"
    bridged_writer.path.write_text(json.dumps(record))
    verdict = verify_record(bridged_writer.path)
    assert verdict.exit_code == INVALID and "'nosuch'" in verdict.line
