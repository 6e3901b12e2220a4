"""The reference engine: a small vLLM-shaped engine, the plugin-facing interfaces and
the built-in platforms. It never imports the suites, the harness or the matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.reference_engine.llm import LLM
    from conformance.reference_engine.sampling_params import SamplingParams

__all__ = ["LLM", "SamplingParams"]


def __getattr__(name: str):
    # Lazy, so importing the interfaces does not build the engine's import graph.
    if name == "LLM":
        from conformance.reference_engine.llm import LLM

        return LLM
    if name == "SamplingParams":
        from conformance.reference_engine.sampling_params import SamplingParams

        return SamplingParams
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
