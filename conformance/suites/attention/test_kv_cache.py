"""Attention suite, KV cache: what ``forward`` writes, and the cache's shape."""

from __future__ import annotations

import dataclasses
import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.contract.attention import AttentionSelectorConfig
from conformance.suites.attention.coverage import covering_specs, fused_qkv_specs, sample_specs
from conformance.suites.attention.strategies import (
    SUITE_SETTINGS,
    assert_cache_written,
    backend_for,
    batch_specs,
    build_batch,
    check_each,
    in_each_fused_layout,
    note_reproducer,
    run_backend,
)
from conformance.suites.attention.tolerances import assert_close_to_oracle
from conformance.suites.support import not_supported


@pytest.mark.contract("attention.kv_cache.write")
@SUITE_SETTINGS
@given(data=st.data())
def test_new_keys_and_values_land_in_their_slots(platform, platform_name, capabilities, data):
    """Hypothesis draws mixed batches; the cache ``forward`` leaves is compared by bit
    pattern (NaN included) with the input cache plus each real token's key and value,
    cast, written at its ``slot_mapping`` slot."""
    spec = data.draw(batch_specs(capabilities))
    note_reproducer(spec, platform_name, "attention.kv_cache.write")
    _check_cache_writes(platform, spec)


@pytest.mark.contract("attention.kv_cache.unowned_slots")
def test_output_ignores_unowned_slots(platform, capabilities):
    """Runs each covering batch twice, the unused tails of last blocks zero then NaN,
    and compares the outputs within the dtype's tolerance where the zero run is finite;
    ``not_supported`` with ``zeroed_cache_blocks``."""
    if capabilities.supports("zeroed_cache_blocks"):
        not_supported("declares zeroed_cache_blocks: the engine zeroes every block before "
                      "a request first uses it")

    def check(spec):
        backend = backend_for(platform, spec.selector)
        zeroed, poisoned = (run_backend(backend, build_batch(spec, backend, platform.torch_device(0), tails))[0]
                            for tails in (0.0, float("nan")))
        # Where the zeroed run is not finite the forward contracts fail; nothing to judge here.
        judged = zeroed.isfinite()
        try:
            assert_close_to_oracle(poisoned.where(judged, 0), zeroed.where(judged, 0).double(), spec.tolerance_dtype,
                                   "attention.kv_cache.unowned_slots")
        except AssertionError as failure:
            raise AssertionError(f"with NaN in the unused tails of partial blocks the output is not what "
                                 f"it is with zeros there (the 'oracle' below): the backend reads slots "
                                 f"no request owns; declare zeroed_cache_blocks if it needs them "
                                 f"zeroed\n  {failure}") from None

    check_each(covering_specs(capabilities, ("prefill", "chunked", "decode")), check,
               "attention.kv_cache.unowned_slots")


@pytest.mark.contract("attention.kv_cache.write")
def test_cache_writes_on_covering_batches(platform, capabilities):
    """The same bitwise comparison of the cache ``forward`` leaves with the expected
    one, on the covering batches of ``attention/coverage.py`` (every declared value and
    pair, and the breaking sizes)."""
    check_each(covering_specs(capabilities, ("prefill", "chunked", "decode")),
               lambda spec: _check_cache_writes(platform, spec), "attention.kv_cache.write")


@pytest.mark.contract("attention.kv_cache.write")
def test_cache_writes_from_fused_qkv_views(platform, capabilities):
    """The same bitwise comparison on the batches of ``coverage.fused_qkv_specs``,
    with ``key`` and ``value`` (and ``query``) from one fused QKV projection in each
    layout of ``strategies.FUSED_LAYOUTS`` (views split as vLLM's attention layer
    splits it; a q/k-normed key of its own beside a value view; views of a projection
    laid out per KV head, whose heads are not packed)."""
    check_each(fused_qkv_specs(capabilities),
               in_each_fused_layout(functools.partial(_check_cache_writes, platform)),
               "attention.kv_cache.write")


@pytest.mark.contract("attention.kv_cache.write")
def test_tokens_of_slot_minus_one_among_the_real_ones_are_not_written(platform, capabilities):
    """The same bitwise comparison on the sample batches of ``coverage.sample_specs``
    whose last new token of each request of several (then its last two) has slot -1
    inside ``num_actual_tokens``, as vLLM's drafter marks its tokens past the model's
    length: padding, whose rows must change no slot (a backend that treats only the
    rows after ``num_actual_tokens`` as padding writes them at slot -1, the cache's
    last)."""
    check_each([dataclasses.replace(spec, unslotted_tail=tail)
                for tail in (1, 2) for spec in sample_specs(capabilities)],
               functools.partial(_check_cache_writes, platform), "attention.kv_cache.write")


def _check_cache_writes(platform, spec, **build) -> None:
    """``build`` goes to ``build_batch``."""
    backend = backend_for(platform, spec.selector)
    batch = build_batch(spec, backend, platform.torch_device(0), **build)
    _, kv_cache = run_backend(backend, batch)
    assert_cache_written(kv_cache, batch)


@pytest.mark.contract("attention.kv_cache.shape")
def test_kv_cache_shape_is_the_logical_layout(platform, capabilities):
    """Calls ``get_kv_cache_shape(7, block_size, 3, head_size)`` on the backend named
    for every declared head size and block size (first declared dtype) and compares the
    result with the expected tuple."""
    for head_size in capabilities.head_sizes:
        for block_size in capabilities.block_sizes:
            config = AttentionSelectorConfig(head_size, capabilities.dtypes[0], block_size)
            backend = backend_for(platform, config)
            shape = backend.get_kv_cache_shape(7, block_size, 3, head_size)
            assert tuple(shape) == (2, 7, block_size, 3, head_size), (
                f"{backend.__name__}.get_kv_cache_shape(7, {block_size}, 3, {head_size}) = {shape}"
            )
