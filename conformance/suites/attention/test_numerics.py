"""Attention suite, numerics: determinism, and no overflow where the result fits."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from conformance.suites.attention.coverage import covering_specs
from conformance.suites.attention.strategies import (
    SUITE_SETTINGS,
    BatchSpec,
    backend_for,
    batch_specs,
    bits,
    build_batch,
    check_each,
    note_reproducer,
    run_backend,
    run_oracle,
)
from conformance.suites.attention.tolerances import assert_close_to_oracle
from conformance.suites.support import not_supported


@pytest.mark.contract("attention.numerics.deterministic")
@SUITE_SETTINGS
@given(data=st.data())
def test_same_input_same_output_bitwise(platform, platform_name, capabilities, data):
    """Hypothesis draws mixed batches; the backend runs twice on fresh copies of the
    same inputs and cache, and both outputs and both left caches are compared by bit
    pattern."""
    spec = data.draw(batch_specs(capabilities))
    note_reproducer(spec, platform_name, "attention.numerics.deterministic")
    _check_deterministic(platform, spec)


@pytest.mark.contract("attention.numerics.deterministic")
def test_deterministic_on_covering_batches(platform, capabilities):
    """The same two-run bit-pattern comparison of outputs and caches on the covering
    batches of ``attention/coverage.py`` (every declared value and pair, and the
    breaking sizes)."""
    check_each(covering_specs(capabilities, ("prefill", "chunked", "decode")),
               lambda spec: _check_deterministic(platform, spec), "attention.numerics.deterministic")


def _check_deterministic(platform, spec) -> None:
    backend = backend_for(platform, spec.selector)
    batch = build_batch(spec, backend, platform.torch_device(0))
    (first, first_cache), (second, second_cache) = run_backend(backend, batch), run_backend(backend, batch)
    assert torch.equal(bits(first), bits(second)), "two runs on the same input differ"
    assert torch.equal(bits(first_cache), bits(second_cache)), "two runs wrote different caches"


@pytest.mark.contract("attention.numerics.fp16_long_context")
def test_fp16_long_context_does_not_overflow(platform, platform_name, capabilities):
    """A fixed fp16 batch (a decode and a 3-token chunk after about 8 and 6 blocks) with
    keys scaled by 0.01 and values ``|v| + 1000``, compared with the float64 oracle,
    tolerance scaled for 1000; needs declared float16."""
    if torch.float16 not in capabilities.dtypes:
        not_supported(f"{platform.__name__} does not declare float16")
    block_size = capabilities.block_sizes[0]
    spec = BatchSpec(query_lens=(1, 3), context_lens=(8 * block_size + 1, 6 * block_size - 1),
                     num_kv_heads=1, group=2, head_size=capabilities.head_sizes[0], block_size=block_size,
                     dtype=torch.float16, padding_tokens=1, seed=0, value_scale=100.0)
    note_reproducer(spec, platform_name, "attention.numerics.fp16_long_context")
    backend = backend_for(platform, spec.selector)
    batch = build_batch(spec, backend, platform.torch_device(0))
    # Small keys make the attention nearly uniform; |v| + 1000 makes every value large
    # and positive (NaN in unowned slots stays NaN).
    batch.kv_cache[0].mul_(0.01)
    batch.key.mul_(0.01)
    batch.kv_cache[1].abs_().add_(1000)
    batch.value.abs_().add_(1000)
    output, _ = run_backend(backend, batch)
    assert_close_to_oracle(output, run_oracle(batch), spec.tolerance_dtype, "attention.numerics.fp16_long_context",
                           value_scale=1000.0)
