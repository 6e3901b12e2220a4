"""Undeclared values to probe a declaration with, stated once for every suite.

A plugin asked for a head size or block size it did not declare must refuse it. A
check by range instead of by set (``head_size <= max(declared)``), or a config hook
that rounds an undeclared value to a declared one, refuses only the values above the
largest declared one; so the probes also come from below the smallest and from
between two declared values, each a value a plugin could really be asked for (a head
size is a multiple of 8, a block size a power of two).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def undeclared_head_sizes(declared: Iterable[int]) -> list[int]:
    """Above the largest, below the smallest and between two declared head sizes."""
    return _probes(declared, lambda size: size + 8, lambda size: size - 8 if size > 8 else None)


def undeclared_block_sizes(declared: Iterable[int]) -> list[int]:
    """Above the largest, below the smallest and between two declared block sizes."""
    return _probes(declared, lambda size: size * 2, lambda size: size // 2 if size > 1 else None)


def _probes(declared: Iterable[int], next_up: Callable[[int], int],
            next_down: Callable[[int], int | None]) -> list[int]:
    values = sorted(set(declared))
    probes = [next_up(values[-1])]
    if (below := next_down(values[0])) is not None:
        probes.append(below)
    # The first gap only: one value between is what a range check lets through.
    gaps = (next_up(low) for low, high in zip(values, values[1:]) if next_up(low) < high)
    if (between := next(gaps, None)) is not None:
        probes.append(between)
    return probes
