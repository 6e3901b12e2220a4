"""``BlockManager``: which KV-cache blocks each sequence holds.

A block is a fixed run of ``block_size`` token slots in every layer's cache. Each
block belongs to at most one sequence (the engine has no prefix caching) and returns
to the free list when that sequence is freed.
"""

from __future__ import annotations

from collections import deque

from conformance.reference_engine.engine.sequence import Sequence


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.free_blocks: deque[int] = deque(range(num_blocks))

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_blocks)

    def blocks_needed(self, seq: Sequence, num_new_tokens: int) -> int:
        """Blocks ``seq`` must add to hold ``num_new_tokens`` more computed tokens."""
        total = seq.num_computed_tokens + num_new_tokens
        return max(0, -(-total // self.block_size) - len(seq.block_table))

    def can_append(self, seq: Sequence, num_new_tokens: int) -> bool:
        return self.blocks_needed(seq, num_new_tokens) <= len(self.free_blocks)

    def append(self, seq: Sequence, num_new_tokens: int) -> None:
        """Give ``seq`` the blocks for ``num_new_tokens`` more tokens (call
        ``can_append`` first)."""
        for _ in range(self.blocks_needed(seq, num_new_tokens)):
            seq.block_table.append(self.free_blocks.popleft())

    def free(self, seq: Sequence) -> None:
        """Return every block of ``seq`` to the free list."""
        self.free_blocks.extend(reversed(seq.block_table))
        seq.block_table = []
