"""The bridge against vLLM's own ``cpu`` platform: the study's findings, reproduced by
the kit and asserted as they are, so a vLLM that fixes them shows here as a change.

Needs vLLM (``pip install 'conformance[vllm]'``); deselected by default, run with
``python -m pytest -m requires_vllm tests/bridges`` (docs/vllm.md).
"""

from __future__ import annotations

import pytest
from bridged_runs import run_bridged

from conformance.bridges.vllm.communicator import collectives_path

pytestmark = pytest.mark.requires_vllm


def _run(tmp_path, *args: str) -> dict:
    record, run = run_bridged(tmp_path, "cpu", "-q", *args)
    assert record is not None, run.stdout[-3000:] + run.stderr[-3000:]
    return record


def _by_test(record: dict) -> dict[str, dict]:
    return {t["nodeid"].split("::", 1)[1]: t for t in record["tests"]}


#: Collectives given a strided view that fail on each of vLLM's two CPU paths
#: (``collectives_path``): its shared-memory collectives (the x86 build for AVX-512
#: has them; on an AVX2-only host vLLM loads ``_C_AVX2``, which lacks them), or
#: ``torch.distributed`` over gloo.
STRIDED_FAILURES = {
    # Its shared-memory ops and gloo's send refuse the view; broadcast goes to gloo.
    "_CPUSHMDistributed": {"all_reduce", "all_gather", "gather", "broadcast", "reduce_scatter", "send_recv"},
    # gloo gathers a view right, but all_reduce and broadcast write it as if contiguous.
    "torch.distributed": {"all_reduce", "broadcast", "reduce_scatter", "send_recv"},
}


def test_communicator_findings(tmp_path):
    """vllm-project/vllm#30546: ``movedim(0, dim)`` where ``movedim(dim, 0)`` is meant;
    the other collectives of the same world pass. And collectives given a strided view
    (an engine's slice, which the contract allows) fail, which ones depending on the
    path vLLM takes on this host (``STRIDED_FAILURES``); ``broadcast`` fails on both:
    gloo writes the view's memory as if contiguous, wrong values with no error."""
    record = _run(tmp_path, "--suite", "communicator", "-k",
                  "world2 and (reduce_scatter or all_reduce or all_gather or strided)")
    tests = _by_test(record)
    broken = tests["test_reduce_scatter_gives_each_rank_its_chunk[world2]"]
    assert broken["outcome"] == "failed"
    # The kit's call, then vLLM's own assert and where it is.
    message = broken["message"]
    call = "vllm.distributed.device_communicators.cpu_communicator.CpuCommunicator.reduce_scatter(a (2, 3, 8) torch."
    assert call in message and " tensor, dim=2) on rank " in message, message
    assert " of 2 raised AssertionError" in message
    assert "base_device_communicator.py" in message
    assert "assert input_tensor.shape[0] % world_size == 0" in message
    assert tests["test_all_reduce_sums_over_ranks[world2]"]["outcome"] == "passed"
    assert tests["test_all_gather_concatenates_in_rank_order[world2]"]["outcome"] == "passed"
    assert record["provenance"]["plugin"]["bridge"]["interface"] == "vllm"
    strided = {name.removeprefix("test_").split("_on_strided_views[")[0]: test["outcome"]
               for name, test in tests.items() if "_on_strided_views[" in name}
    path = collectives_path()
    assert path in STRIDED_FAILURES, f"vLLM's CPU communicator takes a path not studied: {path}"
    assert len(strided) == 6, strided
    assert {name for name, outcome in strided.items() if outcome == "failed"} == STRIDED_FAILURES[path], (
        f"vLLM's {path} path: {strided}")
    assert "strided view #0: wrong values" in tests["test_broadcast_on_strided_views[world2]"]["message"]


def test_platform_gaps_are_named(tmp_path):
    """What vLLM's Platform lacks fails under the rule that needs it, saying so; the
    Worker suite is not_supported with the reason; what vLLM declares passes."""
    record = _run(tmp_path, "--suite", "platform,worker", "-k", "runtime or identity or worker")
    tests = _by_test(record)
    gaps = {
        "test_set_device_round_trip": "vLLM's Platform has no current_device (it forwards to torch.cpu.current_device",
        "test_event_timing_is_ordered": "vLLM's Platform has no Event (it forwards to torch.cpu.Event, which raises TypeError",
        "test_worker_class_resolves": "vLLM's Platform has no get_worker_cls",
    }
    for test, message in gaps.items():
        assert tests[test]["outcome"] == "failed" and message in tests[test]["message"], tests[test]
    assert tests["test_available_with_devices"]["outcome"] == "passed"
    assert tests["test_manual_seed_all_reproduces"]["outcome"] == "failed"  # CpuPlatform.manual_seed_all is `pass`
    worker = [t for t in record["tests"] if t["contract"] and t["contract"].startswith("worker.")]
    assert worker and all(t["outcome"] == "not_supported" for t in worker)
    assert "vLLM's worker interface does not map" in worker[0]["message"]


def test_attention_reads_the_unused_tail_of_partial_blocks(tmp_path):
    """The study's finding: CPU_ATTN reads the unused tail of a request's last block
    (vLLM's CPU runner zeroes every new block, and vLLM declares nothing of it, so the
    bridge declares no zeroed_cache_blocks): NaN there makes rows NaN. With the tails
    zero, as the other contracts leave them, vLLM's forward and cache writer pass."""
    record = _run(tmp_path, "--suite", "attention", "-k", "attention.kv_cache or attention.forward")
    contracts = {c: v["outcome"] for c, v in record["contracts"].items()}
    unowned = [t for t in record["tests"] if t["contract"] == "attention.kv_cache.unowned_slots"]
    assert [t["outcome"] for t in unowned] == ["failed"]
    assert "with NaN in the unused tails of partial blocks the output is not" in unowned[0]["message"]
    assert "got nan" in unowned[0]["message"]
    for contract in ("forward.prefill", "forward.decode", "forward.mixed", "forward.successive_calls",
                     "forward.inputs_unchanged", "forward.output_in_place", "kv_cache.write",
                     "kv_cache.shape"):
        assert contracts[f"attention.{contract}"] == "passed", contract
