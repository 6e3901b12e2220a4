"""The block manager: allocation, growth, reference counts, freeing."""

from __future__ import annotations

from conformance.reference_engine.engine.block_manager import BlockManager
from conformance.reference_engine.engine.sequence import Sequence
from conformance.reference_engine.sampling_params import SamplingParams


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


def test_shared_blocks_are_freed_by_their_last_holder():
    """Rule: a shared block returns to the free list only when every sequence holding
    it has freed it; unshared blocks return at once."""
    manager = BlockManager(num_blocks=6, block_size=4)
    a, b = seq("a", 8), seq("b", 12)
    manager.append(a, 8)
    manager.share(a, b, 2)
    b.num_computed_tokens = 8
    manager.append(b, 4)
    assert b.block_table[:2] == a.block_table and manager.num_free_blocks == 3
    manager.free(a)
    assert manager.num_free_blocks == 3 and a.block_table == []
    manager.free(b)
    assert manager.num_free_blocks == 6
    assert sorted(manager.free_blocks) == list(range(6))
