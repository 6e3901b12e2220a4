"""Attention suite, forward: outputs of ragged paged batches match the oracle."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.suites.attention.coverage import (
    covering_specs,
    fused_qkv_specs,
    sample_specs,
    successive_steps,
)
from conformance.suites.attention.strategies import (
    SUITE_SETTINGS,
    BatchSpec,
    assert_cache_written,
    backend_for,
    batch_specs,
    bits,
    build_batch,
    check_against_oracle,
    check_each,
    compare_with_oracle,
    describe,
    in_each_fused_layout,
    make_impl,
    run_backend,
    run_oracle,
)
from conformance.suites.attention.tolerances import assert_close_to_oracle


@pytest.mark.contract("attention.forward.prefill")
@SUITE_SETTINGS
@given(data=st.data())
def test_prefill_matches_oracle(platform, platform_name, capabilities, data):
    """Hypothesis draws up to 8 prefill requests, lengths often at a block boundary or
    one off it, over declared head sizes, block sizes, dtypes and GQA groups, with
    padding; compared with the float64 oracle within the dtype's tolerance."""
    spec = data.draw(batch_specs(capabilities, ("prefill",)))
    check_against_oracle(platform, platform_name, spec, "attention.forward.prefill")


@pytest.mark.contract("attention.forward.decode")
@SUITE_SETTINGS
@given(data=st.data())
def test_decode_matches_oracle(platform, platform_name, capabilities, data):
    """Hypothesis draws up to 8 decode requests, contexts often at a block boundary or
    one off it, in shuffled blocks, over declared values and GQA groups, with padding;
    compared with the float64 oracle within the dtype's tolerance."""
    spec = data.draw(batch_specs(capabilities, ("decode",)))
    check_against_oracle(platform, platform_name, spec, "attention.forward.decode")


@pytest.mark.contract("attention.forward.mixed")
@SUITE_SETTINGS
@given(data=st.data())
def test_mixed_batch_matches_oracle(platform, platform_name, capabilities, data):
    """Hypothesis draws batches mixing prefill, chunked and decode requests with 0 to 3
    padding tokens (slot -1), over declared values and GQA groups; compared with the
    float64 oracle within the dtype's tolerance."""
    spec = data.draw(batch_specs(capabilities))
    check_against_oracle(platform, platform_name, spec, "attention.forward.mixed")


@pytest.mark.contract("attention.forward.prefill")
def test_prefill_on_covering_batches(platform, capabilities):
    """The covering batches of ``attention/coverage.py`` as two prefill requests each,
    plus its many-request and large-GQA-group batches, each compared with the float64
    oracle within the dtype's tolerance."""
    _cover(platform, capabilities, ("prefill", "prefill"), "attention.forward.prefill")


@pytest.mark.contract("attention.forward.decode")
def test_decode_on_covering_batches(platform, capabilities):
    """The covering batches of ``attention/coverage.py`` as two decode requests each,
    plus its 4,133-token decode contexts, 64-request and large-GQA-group batches, each
    compared with the float64 oracle within tolerance."""
    _cover(platform, capabilities, ("decode", "decode"), "attention.forward.decode")


@pytest.mark.contract("attention.forward.mixed")
def test_mixed_on_covering_batches(platform, capabilities):
    """The covering batches of ``attention/coverage.py`` with a prefill, a chunked and a
    decode request each, plus its breaking sizes, each compared with the float64 oracle
    within the dtype's tolerance."""
    _cover(platform, capabilities, ("prefill", "chunked", "decode"),
           "attention.forward.mixed")


def _cover(platform, capabilities, kinds, contract):
    check_each(covering_specs(capabilities, kinds),
               lambda spec: compare_with_oracle(platform, spec, contract), contract)


@pytest.mark.contract("attention.forward.mixed")
def test_mixed_on_fused_qkv_views(platform, capabilities):
    """The batches of ``coverage.fused_qkv_specs`` (mixed, one per cast KV-cache
    dtype, and one of four heads with a KV head each) with ``query``, ``key`` and
    ``value`` from one fused QKV projection in each layout of
    ``strategies.FUSED_LAYOUTS`` (all three views, split as vLLM's attention layer
    splits it; query and key q/k-normed into tensors of their own; views of a
    projection laid out per KV head, whose heads are not packed), each compared with
    the float64 oracle within the dtype's tolerance."""
    check_each(fused_qkv_specs(capabilities),
               in_each_fused_layout(functools.partial(compare_with_oracle, platform,
                                                      contract="attention.forward.mixed")),
               "attention.forward.mixed")


@pytest.mark.contract("attention.forward.inputs_unchanged")
def test_query_key_value_left_unmodified(platform, capabilities):
    """Runs ``forward`` on the sample batches of ``coverage.sample_specs`` (the first
    four covering batches of all three request kinds, and the first with each declared
    KV-cache dtype other than its model dtype, where a backend casts the new keys and
    values) and compares the bit patterns of ``query``, ``key`` and ``value`` before
    and after, token row by token row."""
    changed = []
    for spec in sample_specs(capabilities):
        backend = backend_for(platform, spec.selector)
        batch = build_batch(spec, backend, platform.torch_device(0))
        inputs = {"query": batch.query, "key": batch.key, "value": batch.value}
        before = {name: bits(tensor).clone() for name, tensor in inputs.items()}
        make_impl(backend, spec).forward(batch.query, batch.key, batch.value, batch.kv_cache,
                                         batch.metadata, batch.new_output())
        for name, tensor in inputs.items():
            differ = (bits(tensor) != before[name]).flatten(1).any(dim=1)
            if differ.any():
                changed.append(f"{name}: {int(differ.sum())} of {len(differ)} token rows changed, "
                               f"first token {int(differ.nonzero()[0])} (batch {describe(spec)})")
    assert not changed, "forward modified its inputs:\n" + "\n".join(changed[:3])


@pytest.mark.contract("attention.forward.successive_calls")
def test_successive_calls_on_one_impl(platform, capabilities):
    """Feeds one impl the nine steps of ``coverage.successive_steps`` (a prefill,
    decodes growing a token a step, a batch that grows, mixes, shrinks and grows again,
    then two earlier shapes with other lengths and block tables), compares every call's
    output with the float64 oracle and its cache bitwise with the expected writes, and
    after the last call compares every step's output and cache bitwise with what they
    held when their call returned."""
    specs = successive_steps(capabilities)
    backend = backend_for(platform, specs[0].selector)
    impl = make_impl(backend, specs[0])
    failures, kept = [], []
    for call, spec in enumerate(specs, 1):
        batch = build_batch(spec, backend, platform.torch_device(0))
        output, kv_cache = run_backend(backend, batch, impl)
        kept += [(call, "output", output, bits(output).clone()), (call, "cache", kv_cache, bits(kv_cache).clone())]
        try:
            assert_close_to_oracle(output, run_oracle(batch), spec.tolerance_dtype,
                                   "attention.forward.successive_calls")
            assert_cache_written(kv_cache, batch)
        except AssertionError as failure:
            failures.append(f"call {call} of {len(specs)} ({describe(spec)}):\n  {failure}")
    failures += [f"call {call}'s {what} changed after later calls"
                 for call, what, tensor, then in kept if not bits(tensor).equal(then)]
    assert not failures, "\n".join(failures[:3])


@pytest.mark.contract("attention.forward.output_in_place")
def test_output_written_in_place(platform, capabilities):
    """A fixed batch (a 3-token prefill, a decode after 5 tokens, one padding token)
    with a NaN-filled ``output``: checks the identity of the returned tensor and
    compares ``output``'s real rows with the float64 oracle."""
    spec = BatchSpec(query_lens=(3, 1), context_lens=(0, 5), num_kv_heads=1, group=2,
                     head_size=capabilities.head_sizes[0], block_size=capabilities.block_sizes[0],
                     dtype=capabilities.dtypes[0], padding_tokens=1, seed=0)
    backend = backend_for(platform, spec.selector)
    batch = build_batch(spec, backend, platform.torch_device(0))
    output = batch.new_output()
    returned = make_impl(backend, spec).forward(*batch.inputs(), batch.kv_cache.clone(), batch.metadata, output)
    assert returned is output, "forward returned a new tensor instead of `output`"
    assert_close_to_oracle(output[: batch.num_tokens], run_oracle(batch), spec.tolerance_dtype,
                           "attention.forward.output_in_place")
