"""Correct plugins with narrow declarations, as new hardware usually has: the suites
must test what each declares and report the rest ``not_supported``, never fail it."""

import dataclasses

import torch
from kit_test_plugins import TestPlatform


def _narrowed(**declared):
    return dataclasses.replace(TestPlatform.capabilities, **declared)


class NarrowBf16Platform(TestPlatform):
    """bf16 only, head size 128, block size 16, one rank, no optional feature."""

    device_name = "narrow-bf16"
    capabilities = _narrowed(dtypes=(torch.bfloat16,), head_sizes=(128,), block_sizes=(16,),
                             max_world_size=1, features=frozenset())


class NarrowFp16Platform(TestPlatform):
    """fp16 only; otherwise the cpu platform's declaration."""

    device_name = "narrow-fp16"
    capabilities = _narrowed(dtypes=(torch.float16,))


class NarrowBlock128Platform(TestPlatform):
    """Block size 128 only; otherwise the cpu platform's declaration."""

    device_name = "narrow-block128"
    capabilities = _narrowed(block_sizes=(128,))


class CastCachePlatform(TestPlatform):
    """float16 and float32 models, each with its KV cache in the model dtype, in
    float32 or in bfloat16: caches wider than, narrower than and as wide as the
    model's (head size 128, block size 16)."""

    device_name = "cast-cache"
    capabilities = _narrowed(dtypes=(torch.float16, torch.float32), head_sizes=(128,), block_sizes=(16,),
                             kv_cache_dtypes=("auto", "float32", "bfloat16"))
