"""Platform suite, config hooks: refusing what the platform cannot run."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from conformance.contract.capabilities import KNOWN_DTYPES, KNOWN_KV_CACHE_DTYPES
from conformance.contract.config import EngineConfig
from conformance.suites.support import config_checked
from conformance.suites.undeclared import undeclared_block_sizes

_FOREIGN_ARCH = "MixtralForCausalLM"
_FOREIGN_QUANT = "no-such-quantization"


def _declared_config(capabilities) -> EngineConfig:
    return EngineConfig(
        architecture=capabilities.model_architectures[0],
        dtype=capabilities.dtypes[0],
        kv_cache_dtype=capabilities.kv_cache_dtypes[0],
        block_size=capabilities.block_sizes[0],
    )


@pytest.mark.contract("platform.config.model_arch")
def test_verify_model_arch(platform, capabilities):
    """Calls ``verify_model_arch`` on every declared architecture, then (if undeclared)
    on ``MixtralForCausalLM``, expecting a ``ValueError`` whose message matches that
    name."""
    for arch in capabilities.model_architectures:
        platform.verify_model_arch(arch)
    if _FOREIGN_ARCH not in capabilities.model_architectures:
        with pytest.raises(ValueError, match=_FOREIGN_ARCH):
            platform.verify_model_arch(_FOREIGN_ARCH)


@pytest.mark.contract("platform.config.quantization")
def test_verify_quantization(platform, capabilities):
    """Calls ``verify_quantization`` with None and each declared method, then with the
    made-up ``no-such-quantization``, expecting a ``ValueError`` whose message matches
    it."""
    for quant in (None, *capabilities.quantizations):
        platform.verify_quantization(quant)
    with pytest.raises(ValueError, match=_FOREIGN_QUANT):
        platform.verify_quantization(_FOREIGN_QUANT)


@pytest.mark.contract("platform.config.check_and_update")
def test_check_and_update_config(platform, capabilities):
    """Runs ``check_and_update_config`` on every declared dtype x KV-cache dtype x block
    size, checking the updated fields; then one-field variants: block sizes above, below
    and between the declared ones, ``max_world_size + 1``, Mixtral, first undeclared
    (KV-cache) dtypes."""
    for dtype, kv_cache_dtype, block_size in itertools.product(
            capabilities.dtypes, capabilities.kv_cache_dtypes, capabilities.block_sizes):
        config = dataclasses.replace(_declared_config(capabilities), dtype=dtype,
                                     kv_cache_dtype=kv_cache_dtype, block_size=block_size)
        platform.check_and_update_config(config)
        config_checked(dtypes=dtype, kv_cache_dtypes=kv_cache_dtype, block_sizes=block_size)
        assert config.dtype in capabilities.dtypes, f"{dtype} became {config.dtype}"
        assert config.block_size in capabilities.block_sizes, f"block {block_size} became {config.block_size}"
        assert config.kv_cache_dtype in capabilities.kv_cache_dtypes

    undeclared = [("block_size", size) for size in undeclared_block_sizes(capabilities.block_sizes)]
    undeclared += [("tensor_parallel_size", capabilities.max_world_size + 1), ("architecture", _FOREIGN_ARCH)]
    missing_dtypes = [d for d in KNOWN_DTYPES if d not in capabilities.dtypes]
    if missing_dtypes:
        undeclared.append(("dtype", missing_dtypes[0]))
    missing_cache_dtypes = sorted(KNOWN_KV_CACHE_DTYPES - set(capabilities.kv_cache_dtypes))
    if missing_cache_dtypes:
        undeclared.append(("kv_cache_dtype", missing_cache_dtypes[0]))
    for field, value in undeclared:
        bad = dataclasses.replace(_declared_config(capabilities), **{field: value})
        with pytest.raises(ValueError):
            platform.check_and_update_config(bad)
