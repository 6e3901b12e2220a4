"""PlatformCapabilities: a declaration that cannot change and says what is wrong."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from conformance.contract.capabilities import PlatformCapabilities

GOOD = PlatformCapabilities(
    dtypes=(torch.float32,), head_sizes=(64,), block_sizes=(16,),
    max_world_size=2, features=frozenset({"tensor_parallel"}),
)


def test_a_good_declaration_validates():
    """A consistent declaration has no problems."""
    assert GOOD.validate() == []


def test_declarations_are_immutable():
    """A declaration cannot be changed after the platform class is defined."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        GOOD.max_world_size = 8


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"dtypes": ()}, "dtypes must be a non-empty tuple"),
        ({"dtypes": [torch.float32]}, "dtypes must be a non-empty tuple"),
        ({"dtypes": (torch.int8,)}, "torch.int8"),
        ({"head_sizes": (60,)}, "head size 60"),
        ({"block_sizes": (24,)}, "block size 24"),
        ({"kv_cache_dtypes": ("fp8",)}, "kv-cache dtype 'fp8'"),
        ({"features": frozenset({"tensor_parallel", "slidingwindow"})}, "'slidingwindow'"),
        ({"max_world_size": 0}, "max_world_size 0"),
        ({"max_world_size": 1}, "tensor_parallel"),
        ({"model_architectures": ()}, "model_architectures"),
    ],
)
def test_problems_are_named(change, complaint):
    """Each malformed or contradictory field is reported by name."""
    problems = dataclasses.replace(GOOD, **change).validate()
    assert any(complaint in p for p in problems), problems


def test_supports_refuses_unknown_features():
    """Asking about an unknown feature is an error, not a quiet False."""
    assert GOOD.supports("tensor_parallel") and not GOOD.supports("sliding_window")
    with pytest.raises(ValueError, match="unknown feature 'slidingwindow'"):
        GOOD.supports("slidingwindow")
