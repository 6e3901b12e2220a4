"""Rotary position embedding (RoPE, the rotate-half form Llama checkpoints use)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    """One instance serves every layer of a model: all layers of a step rotate by the
    same positions, so the torch path looks the tables up once per step."""

    def __init__(
        self, head_size: int, max_position: int, theta: float, kernel: Callable | None = None
    ) -> None:
        super().__init__()
        self.head_size = head_size
        inv_freq = 1.0 / theta ** (torch.arange(0, head_size, 2, dtype=torch.float32) / head_size)
        freqs = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
        # Computed on the host in fp32 and kept so on the device, as Hugging Face does.
        self.register_buffer("cos", freqs.cos(), persistent=False)
        self.register_buffer("sin", freqs.sin(), persistent=False)
        self.kernel = kernel
        self._looked_up: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None

    def _tables(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``[tokens, 1, head_size]`` cos and signed sin for ``positions``, reused while
        the same positions tensor comes back (the next layers of one step)."""
        if self._looked_up is None or self._looked_up[0] is not positions:
            cos, sin = self.cos[positions], self.sin[positions]
            full_cos = torch.cat((cos, cos), dim=-1).unsqueeze(1)
            signed_sin = torch.cat((-sin, sin), dim=-1).unsqueeze(1)
            self._looked_up = (positions, full_cos, signed_sin)
        return self._looked_up[1], self._looked_up[2]

    def forward(self, positions: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``[tokens, heads, head_size]`` rotated by each token's position (pass
        queries and keys together: one rotation for both)."""
        if self.kernel is not None:
            return self.kernel(positions, x, self.cos, self.sin)
        return self.forward_native(positions, x)

    def forward_native(self, positions: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The torch implementation: the reference a platform's kernel must match."""
        cos, signed_sin = self._tables(positions)
        h = x.float()
        # [x1, x2] * cos + [x2, x1] * [-sin, sin]: the same products and sums, in the
        # same order, as x1*cos - x2*sin and x2*cos + x1*sin, in a third of the ops.
        return (h * cos + h.roll(self.head_size // 2, dims=-1) * signed_sin).to(x.dtype)
