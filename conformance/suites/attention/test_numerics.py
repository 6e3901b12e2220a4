"""Attention suite, numerics: determinism, and no overflow where the result fits."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from conformance.suites.attention.strategies import (
    SUITE_SETTINGS,
    BatchSpec,
    backend_for,
    batch_specs,
    bits,
    build_batch,
    check_against_oracle,
    note_reproducer,
    run_backend,
)
from conformance.suites.support import not_supported


@pytest.mark.contract("attention.numerics.deterministic")
@SUITE_SETTINGS
@given(data=st.data())
def test_same_input_same_output_bitwise(platform, platform_name, capabilities, data):
    """The same batch on the same cache twice gives bitwise the same output and cache."""
    spec = data.draw(batch_specs(capabilities))
    note_reproducer(spec, platform_name, "attention.numerics.deterministic")
    backend = backend_for(platform, spec.selector)
    batch = build_batch(spec, backend, platform.torch_device())
    (first, first_cache), (second, second_cache) = run_backend(backend, batch), run_backend(backend, batch)
    assert torch.equal(bits(first), bits(second)), "two runs on the same input differ"
    assert torch.equal(bits(first_cache), bits(second_cache)), "two runs wrote different caches"


@pytest.mark.contract("attention.numerics.fp16_long_context")
def test_fp16_long_context_does_not_overflow(platform, platform_name, capabilities):
    """In fp16, values near 1000 over a context of hundreds of tokens: the output is a
    weighted mean of the values, so it fits in fp16 and must match the oracle, even
    though an unnormalised sum of the weighted values would exceed fp16's range."""
    if torch.float16 not in capabilities.dtypes:
        not_supported(f"{platform.__name__} does not declare float16")
    block_size = capabilities.block_sizes[0]
    spec = BatchSpec(query_lens=(1, 3), context_lens=(8 * block_size + 1, 6 * block_size - 1),
                     num_kv_heads=1, group=2, head_size=capabilities.head_sizes[0], block_size=block_size,
                     dtype=torch.float16, padding_tokens=1, seed=0)
    spec = dataclasses.replace(spec, value_scale=1000.0)
    check_against_oracle(platform, platform_name, spec, "attention.numerics.fp16_long_context")
