"""``BlockManager``: which KV-cache blocks each sequence holds.

A block is a fixed run of ``block_size`` token slots in every layer's cache. Blocks
are reference-counted so that one block can back several sequences (a shared prompt
prefix): a block returns to the free list only when its last holder frees it.
"""

from __future__ import annotations

from collections import deque

from conformance.reference_engine.engine.sequence import Sequence


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.ref_counts = [0] * num_blocks
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
            block = self.free_blocks.popleft()
            self.ref_counts[block] = 1
            seq.block_table.append(block)

    def share(self, source: Sequence, seq: Sequence, num_blocks: int) -> None:
        """Let ``seq`` start with ``source``'s first ``num_blocks`` blocks (one more
        reference each). Only full blocks may be shared: nobody writes to them again."""
        for block in source.block_table[:num_blocks]:
            self.ref_counts[block] += 1
            seq.block_table.append(block)

    def free(self, seq: Sequence) -> None:
        """Drop ``seq``'s references; blocks nobody references become free."""
        for block in reversed(seq.block_table):
            self.ref_counts[block] -= 1
            if self.ref_counts[block] == 0:
                self.free_blocks.append(block)
        seq.block_table = []
