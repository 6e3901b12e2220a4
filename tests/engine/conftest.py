"""Shared fixtures: engines on the ``tiny`` preset, built once per module where the
tests only read from them."""

from __future__ import annotations

import pytest

from conformance.reference_engine import LLM

#: Small enough to build in well under a second, long enough for every test here.
TINY = dict(model="tiny", dtype="float32", max_model_len=256)


@pytest.fixture(scope="module")
def tiny_llm():
    llm = LLM(**TINY)
    yield llm
    llm.shutdown()


@pytest.fixture
def make_llm():
    """``make_llm(**overrides)``: a tiny-preset LLM, shut down after the test."""
    built = []

    def make(**overrides):
        built.append(LLM(**{**TINY, **overrides}))
        return built[-1]

    yield make
    for llm in built:
        llm.shutdown()
