"""Rotary position embedding (RoPE, the rotate-half form Llama checkpoints use)."""

from __future__ import annotations

import torch
from torch import nn

from conformance.reference_engine.layers.platform_ops import platform_op


class RotaryEmbedding(nn.Module):
    def __init__(self, head_size: int, max_position: int, theta: float) -> None:
        super().__init__()
        self.head_size = head_size
        inv_freq = 1.0 / theta ** (torch.arange(0, head_size, 2, dtype=torch.float32) / head_size)
        freqs = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
        # Computed on the host in fp32 and kept so on the device, as Hugging Face does.
        self.register_buffer("cos", freqs.cos(), persistent=False)
        self.register_buffer("sin", freqs.sin(), persistent=False)
        self.kernel = platform_op("rotary_embedding")

    def forward(self, positions: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``[tokens, heads, head_size]`` rotated by each token's position (pass
        queries and keys together: one rotation for both)."""
        if self.kernel is not None:
            return self.kernel(positions, x, self.cos, self.sin)
        cos = self.cos[positions].unsqueeze(1)
        sin = self.sin[positions].unsqueeze(1)
        x1, x2 = x.float().chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)
