"""Attention suite, configuration: what the backend accepts, and what it refuses."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import torch

from conformance.contract.attention import AttentionSelectorConfig
from conformance.suites.attention.strategies import BatchSpec, backend_for, build_batch, make_impl
from conformance.suites.undeclared import undeclared_block_sizes, undeclared_head_sizes


def _declared(capabilities):
    return AttentionSelectorConfig(capabilities.head_sizes[0], capabilities.dtypes[0],
                                   capabilities.block_sizes[0])


def _undeclared_variants(capabilities) -> list[tuple[str, AttentionSelectorConfig]]:
    """The first declared configuration with one axis moved outside the declared set."""
    base = _declared(capabilities)
    variants = [("head size", dataclasses.replace(base, head_size=size))
                for size in undeclared_head_sizes(capabilities.head_sizes)]
    variants += [("block size", dataclasses.replace(base, block_size=size))
                 for size in [*undeclared_block_sizes(capabilities.block_sizes), max(capabilities.block_sizes) * 2 + 1]]
    variants.append(("dtype", dataclasses.replace(base, dtype=torch.float64)))
    variants += [("dtype", dataclasses.replace(base, dtype=d))
                 for d in (torch.float32, torch.bfloat16, torch.float16) if d not in capabilities.dtypes]
    if not capabilities.supports("sliding_window"):
        variants.append(("sliding window", dataclasses.replace(base, sliding_window=8)))
    if not capabilities.supports("logits_soft_cap"):
        variants.append(("logits soft cap", dataclasses.replace(base, logits_soft_cap=30.0)))
    # Outside every declaration: a kernel taking 0 for "no window" computes without one.
    variants += [("sliding window", dataclasses.replace(base, sliding_window=w)) for w in (0, -1)]
    variants += [("logits soft cap", dataclasses.replace(base, logits_soft_cap=c)) for c in (0.0, -30.0)]
    return variants


@pytest.mark.contract("attention.config.accepts_declared")
def test_validate_configuration_accepts_declared(platform, capabilities):
    """Enumerates every declared head size x dtype x block size, with each declared
    optional feature on (window 8, soft cap 30; and at the bottom of their ranges,
    window 1, soft cap 0.5), and calls ``validate_configuration`` and ``get_name`` on
    the backend the platform names for it."""
    for head, dtype, block, features in itertools.product(
            capabilities.head_sizes, capabilities.dtypes, capabilities.block_sizes,
            ({"sliding_window": 8, "logits_soft_cap": 30.0}, {"sliding_window": 1, "logits_soft_cap": 0.5})):
        config = AttentionSelectorConfig(head, dtype, block, **{
            name: value for name, value in features.items() if capabilities.supports(name)})
        backend = backend_for(platform, config)
        reasons = backend.validate_configuration(config)
        assert reasons == [], f"refuses declared {config}: {reasons}"
        name = backend.get_name()
        assert isinstance(name, str) and name, f"{backend.__name__}.get_name() returned {name!r}"


def _refused_at_selection(platform, config: AttentionSelectorConfig) -> bool:
    try:
        platform.get_attn_backend_cls(config)
    except ValueError:
        return True
    return False


@pytest.mark.contract("attention.config.refuses_undeclared")
def test_refuses_undeclared_instead_of_computing(platform, capabilities):
    """Moves one axis of the first declared configuration out of the declared set (head
    and block sizes above, below and between the declared ones, a block size no power of
    two, float64 and each undeclared dtype, undeclared features, a sliding window of 0
    and -1, a soft cap of 0 and -30); a variant the platform selects anyway is checked
    for reasons and a raising 2-token prefill."""
    backend = backend_for(platform, _declared(capabilities))
    for axis, config in _undeclared_variants(capabilities):
        if _refused_at_selection(platform, config):
            continue
        reasons = backend.validate_configuration(config)
        assert reasons and all(isinstance(r, str) and r for r in reasons), (
            f"{backend.__name__} gives no reason to refuse an undeclared {axis}: {config}")
        spec = BatchSpec(query_lens=(2,), context_lens=(0,), num_kv_heads=1, group=1,
                         head_size=config.head_size, block_size=config.block_size, dtype=config.dtype,
                         padding_tokens=0, seed=0, sliding_window=config.sliding_window,
                         logits_soft_cap=config.logits_soft_cap)
        batch = build_batch(spec, backend, platform.torch_device(0))
        with pytest.raises(ValueError):
            make_impl(backend, spec).forward(batch.query, batch.key, batch.value, batch.kv_cache,
                                             batch.metadata, batch.new_output())
