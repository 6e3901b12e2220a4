"""The model runner zeroes new cache blocks for a backend that declares it needs them."""

from __future__ import annotations

import types

import torch

from conformance.contract.sampling_params import SamplingParams
from conformance.contract.worker import ScheduledRequest, SchedulerOutput
from conformance.reference_engine.worker.model_runner import ModelRunner

BLOCK_SIZE = 4


def _request(name: str, computed: int, blocks: list[int]) -> ScheduledRequest:
    return ScheduledRequest(name, [1], computed, blocks, SamplingParams(), 0, True)


def test_only_blocks_without_a_computed_token_are_zeroed():
    """A block holding a computed token keeps it; a block the request reaches for the
    first time (a new one, or one a finished request left its keys in) is zeroed, in
    keys and values of every layer."""
    caches = [types.SimpleNamespace(kv_cache=torch.ones(2, 10, BLOCK_SIZE, 1, 2)) for _ in range(2)]
    runner = types.SimpleNamespace(config=types.SimpleNamespace(block_size=BLOCK_SIZE), device="cpu",
                                   model=types.SimpleNamespace(attention_layers=lambda: caches))
    step = SchedulerOutput([_request("mid-block", 5, [3, 7, 9]), _request("new", 0, [1]),
                            _request("at-boundary", 8, [2, 4, 6])])
    ModelRunner.zero_new_blocks(runner, step)
    for layer in caches:
        zeroed = {b for b in range(10) if bool((layer.kv_cache[:, b] == 0).all())}
        kept = {b for b in range(10) if bool((layer.kv_cache[:, b] == 1).all())}
        assert zeroed == {9, 1, 6} and kept == set(range(10)) - zeroed
