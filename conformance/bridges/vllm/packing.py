"""Reading a vLLM KV cache back in the kit's logical layout, by the inverse of vLLM's
own cache writer, derived from the writer itself.

vLLM's CPU backend declares a nominal per-layer cache ``[num_blocks, num_kv_heads,
block_size, 2 * head_size]``, but its writer (``cpu_attn_reshape_and_cache``) packs each
block per ISA (``vec``, ``vec16``, ``amx``, ``neon``: keys transposed, interleaved in
pairs, ...) and vLLM has nothing that unpacks. Rather than copy that layout knowledge
into the kit, where it would silently go stale when vLLM changes a kernel, the bridge
asks the writer where each element goes: it packs a block whose elements are their own
index, reads where each landed, and inverts the placement.

A float holds integers exactly only up to ``2 ** (mantissa bits + 1)`` (256 in
bfloat16), so the index is written in base-``2 ** (mantissa bits + 1)`` digits, one
packing pass per digit. An element the writer never fills, fills twice, or changes on
the way is found and reported: the bridge reads a cache back only through a true
permutation, which also carries NaN bit patterns through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from conformance.bridges.vllm.errors import BridgeLimitation

#: Writes a logical cache (first argument) into a physical one (second argument).
Pack = Callable[[torch.Tensor, torch.Tensor], None]

#: What the physical cache holds before each pass: no digit is negative, so an element
#: still holding it after the pass was never written.
UNWRITTEN = -1.0


def exact_integer_base(dtype: torch.dtype) -> int:
    """The largest power of two below which every integer is exact in ``dtype``
    (``eps`` is ``2 ** -mantissa bits``)."""
    return round(2 / torch.finfo(dtype).eps)


def derive_unpacking(pack: Pack, logical_shape: tuple[int, ...], physical_shape: tuple[int, ...],
                     dtype: torch.dtype) -> torch.Tensor:
    """The gather index that undoes ``pack``: for every logical cache ``x``,
    ``x.flatten() == physical.flatten()[index]`` after ``pack(x, physical)``.

    Raises ``BridgeLimitation`` when ``pack`` is not a permutation of the elements
    (then no index can read the physical cache back), saying how it is not.
    """
    size = math.prod(logical_shape)
    if math.prod(physical_shape) != size:
        raise BridgeLimitation(
            f"vLLM's cache of shape {physical_shape} does not hold the {size} elements of the "
            f"logical cache {logical_shape} one to one, so the bridge cannot read it back")
    base = exact_integer_base(dtype)
    position = torch.arange(size, dtype=torch.long)
    source = torch.zeros(size, dtype=torch.long)
    digits = 1
    while base**digits < size:
        digits += 1
    for digit in range(digits):
        logical = ((position // base**digit) % base).to(dtype).view(logical_shape)
        physical = torch.full(physical_shape, UNWRITTEN, dtype=dtype)
        pack(logical, physical)
        landed = physical.flatten().double()
        _check_digits(landed, base, digit, logical_shape, physical_shape)
        source += landed.long() * base**digit
    _check_permutation(source, logical_shape, physical_shape)
    return torch.empty_like(source).scatter_(0, source, position)


def _check_digits(landed: torch.Tensor, base: int, digit: int, logical_shape, physical_shape) -> None:
    unwritten = landed == UNWRITTEN
    if unwritten.any():
        raise BridgeLimitation(
            f"vLLM's cache writer leaves {int(unwritten.sum())} of {landed.numel()} elements of "
            f"its cache {physical_shape} unwritten when it packs a full logical cache "
            f"{logical_shape} (first: flat element {int(unwritten.nonzero()[0])}), so the "
            "bridge cannot read the cache back")
    changed = (landed < 0) | (landed >= base) | (landed != landed.floor())
    if changed.any():
        first = int(changed.nonzero()[0])
        raise BridgeLimitation(
            f"vLLM's cache writer changes the values it packs (digit pass {digit}: flat element "
            f"{first} of its cache holds {landed[first].item()}, not an integer in [0, {base})), "
            "so the bridge cannot tell where each element went")


def _check_permutation(source: torch.Tensor, logical_shape, physical_shape) -> None:
    # A source index out of range is one logical element fewer in range: counted missing.
    counts = torch.bincount(source, minlength=source.numel())[: source.numel()]
    if (counts != 1).any():
        missing, repeated = int((counts == 0).sum()), int((counts > 1).sum())
        first_missing = int((counts == 0).nonzero()[0]) if missing else None
        raise BridgeLimitation(
            f"vLLM's cache writer does not place the logical cache {logical_shape} one to one "
            f"into its cache {physical_shape}: {missing} logical elements are nowhere "
            f"(first: flat element {first_missing}) and {repeated} are in several places, so "
            "the bridge cannot read the cache back")
