"""What a platform declares it can do, as data.

The suites read these declarations to decide what to test: a declared capability must
work, and anything outside the declaration must be refused with a clear error (the
Attention and Engine suites test both sides). Keeping them in one immutable dataclass
makes a plugin's claims reviewable at a glance and printable in a result record.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import NamedTuple

import torch

#: Optional features a platform may declare. Anything else in ``features`` is an error:
#: a typo must not silently turn a feature's tests into ``not_supported``.
#: ``zeroed_cache_blocks``: the attention backend reads the unused tail of a partial
#: block (a kernel that computes whole blocks and masks by multiplying), so the engine
#: must zero every block before a request first uses it.
KNOWN_FEATURES = frozenset(
    {"sliding_window", "logits_soft_cap", "tensor_parallel", "zeroed_cache_blocks"}
)

#: KV-cache dtype names the kit knows; ``"auto"`` means "same as the model dtype".
KNOWN_KV_CACHE_DTYPES = frozenset({"auto", "float32", "float16", "bfloat16"})

#: Model dtypes the reference engine can run.
KNOWN_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


class DeviceCapability(NamedTuple):
    """A device's compute capability, as vLLM's ``DeviceCapability`` (e.g. 9.0)."""

    major: int
    minor: int

    def as_version_str(self) -> str:
        return f"{self.major}.{self.minor}"


@dataclasses.dataclass(frozen=True)
class PlatformCapabilities:
    """The declared capability set of a platform.

    Every field is a tuple or frozenset so a declaration cannot change after the
    platform class is defined; ``validate()`` lists what is inconsistent instead of
    raising on the first problem, so the Platform suite can report all of it at once.

    Rule ``platform.capabilities.well_formed``: ``capabilities`` is a
    ``PlatformCapabilities`` whose values are all known and consistent with each
    other (``validate()`` finds nothing).

    Rule ``platform.capabilities.dtypes_compute``: every declared dtype can hold
    tensors on the device and multiply them correctly (small integers, so the product
    is exact in every dtype).
    """

    dtypes: tuple[torch.dtype, ...]
    head_sizes: tuple[int, ...]
    block_sizes: tuple[int, ...]
    kv_cache_dtypes: tuple[str, ...] = ("auto",)
    max_world_size: int = 1
    features: frozenset[str] = frozenset()
    model_architectures: tuple[str, ...] = ("LlamaForCausalLM",)
    quantizations: tuple[str, ...] = ()

    def supports(self, feature: str) -> bool:
        """Whether the optional ``feature`` (one of ``KNOWN_FEATURES``) is declared."""
        if feature not in KNOWN_FEATURES:
            raise ValueError(
                f"unknown feature {feature!r}; known features: {sorted(KNOWN_FEATURES)}"
            )
        return feature in self.features

    def validate(self) -> list[str]:
        """Reasons this declaration is malformed or self-contradictory (empty if none).

        Every problem at once: a field of the wrong type (a ``set`` where a
        ``frozenset`` belongs) is reported, and its contents are still checked, so a
        typo inside it is not hidden behind the type error.
        """
        problems = []
        for name in ("dtypes", "head_sizes", "block_sizes", "kv_cache_dtypes"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not value:
                problems.append(f"{name} must be a non-empty tuple, got {value!r}")
        if not isinstance(self.features, frozenset):
            problems.append(f"features must be a frozenset, got {self.features!r}")
        for dtype in _items(self.dtypes):
            if dtype not in KNOWN_DTYPES:
                problems.append(f"dtype {dtype!r} is not one of {KNOWN_DTYPES}")
        for size in _items(self.head_sizes):
            if not isinstance(size, int) or size <= 0 or size % 8:
                problems.append(f"head size {size!r} is not a positive multiple of 8")
        for size in _items(self.block_sizes):
            if not isinstance(size, int) or size <= 0 or size & (size - 1):
                problems.append(f"block size {size!r} is not a positive power of two")
        for name in _items(self.kv_cache_dtypes):
            if name not in KNOWN_KV_CACHE_DTYPES:
                problems.append(f"kv-cache dtype {name!r}{_did_you_mean(name, KNOWN_KV_CACHE_DTYPES)} "
                                f"is not one of {sorted(KNOWN_KV_CACHE_DTYPES)}")
        features = set(_items(self.features))
        for feature in sorted(features - KNOWN_FEATURES, key=repr):
            problems.append(f"unknown feature {feature!r}{_did_you_mean(feature, KNOWN_FEATURES)}")
        if not isinstance(self.max_world_size, int) or self.max_world_size < 1:
            problems.append(f"max_world_size {self.max_world_size!r} is not >= 1")
        elif ("tensor_parallel" in features) != (self.max_world_size > 1):
            problems.append(
                "feature 'tensor_parallel' must be declared exactly when "
                f"max_world_size > 1 (max_world_size={self.max_world_size})"
            )
        if not self.model_architectures:
            problems.append("model_architectures must name at least one architecture")
        return problems

    def as_record(self) -> dict:
        """A JSON-ready view, for result records and the support matrix."""
        return {
            "dtypes": [str(d).removeprefix("torch.") for d in self.dtypes],
            "head_sizes": list(self.head_sizes),
            "block_sizes": list(self.block_sizes),
            "kv_cache_dtypes": list(self.kv_cache_dtypes),
            "max_world_size": self.max_world_size,
            "features": sorted(self.features),
            "model_architectures": list(self.model_architectures),
            "quantizations": list(self.quantizations),
        }


def _did_you_mean(name: object, known) -> str:
    close = difflib.get_close_matches(str(name), sorted(known), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _items(value) -> tuple:
    """The members of a declared collection, whatever its (possibly wrong) type; a
    lone string or number counts as no members (its type error is reported)."""
    if isinstance(value, (tuple, list, set, frozenset)):
        return tuple(value)
    return ()
