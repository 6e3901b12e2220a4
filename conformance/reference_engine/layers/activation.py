"""SiLU-and-mul, the SwiGLU MLP's activation."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn


class SiluAndMul(nn.Module):
    def __init__(self, kernel: Callable | None = None) -> None:
        super().__init__()
        self.kernel = kernel

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``silu(gate) * up`` for ``x = [gate, up]`` along the last dimension."""
        if self.kernel is not None:
            return self.kernel(x)
        return self.forward_native(x)

    @staticmethod
    def forward_native(x: torch.Tensor) -> torch.Tensor:
        """The torch implementation: the reference a platform's kernel must match."""
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up
