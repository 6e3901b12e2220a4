"""The block manager: allocation, growth, freeing."""

from __future__ import annotations

from conformance.contract.sampling_params import SamplingParams
from conformance.reference_engine.engine.block_manager import BlockManager
from conformance.reference_engine.engine.sequence import Sequence


def seq(name: str, length: int) -> Sequence:
    return Sequence(name, list(range(length)), SamplingParams())


def test_append_allocates_exactly_the_blocks_needed():
    """Rule: a sequence holds ceil(computed tokens / block_size) distinct blocks, and
    refuses to grow past the free blocks."""
    manager = BlockManager(num_blocks=5, block_size=4)
    a = seq("a", 9)
    assert manager.blocks_needed(a, 9) == 3
    manager.append(a, 9)
    a.num_computed_tokens = 9
    assert len(set(a.block_table)) == 3 and manager.num_free_blocks == 2
    assert manager.blocks_needed(a, 3) == 0  # fits in the last block's 3 free slots
    assert manager.blocks_needed(a, 4) == 1
    assert not manager.can_append(a, 12) and manager.can_append(a, 11)


def test_freed_blocks_return_and_are_reused():
    """Rule: freeing a sequence returns all its blocks at once, no block is ever held
    by two sequences, and freed blocks serve the next sequence."""
    manager = BlockManager(num_blocks=6, block_size=4)
    a, b = seq("a", 8), seq("b", 12)
    manager.append(a, 8)
    manager.append(b, 12)
    assert not set(a.block_table) & set(b.block_table) and manager.num_free_blocks == 1
    manager.free(a)
    assert manager.num_free_blocks == 3 and a.block_table == []
    c = seq("c", 12)
    manager.append(c, 12)
    assert not set(c.block_table) & set(b.block_table)
    manager.free(b)
    manager.free(c)
    assert sorted(manager.free_blocks) == list(range(6))
