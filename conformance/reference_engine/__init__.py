"""The reference engine: a small vLLM-shaped engine on the plugin contract, with the
built-in platforms and their kernels. It imports only the contract below it; the
suites, the harness and the matrix import it, never the other way round (checked by
import-linter)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.contract.sampling_params import SamplingParams
    from conformance.reference_engine.llm import LLM

__all__ = ["LLM", "SamplingParams"]


def __getattr__(name: str):
    # Lazy, so that importing one engine module does not build the whole engine.
    if name == "LLM":
        from conformance.reference_engine.llm import LLM

        return LLM
    if name == "SamplingParams":
        from conformance.contract.sampling_params import SamplingParams

        return SamplingParams
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
