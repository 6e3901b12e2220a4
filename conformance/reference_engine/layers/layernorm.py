"""RMSNorm, with the residual add fused in as Llama uses it."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float, kernel: Callable | None = None) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size), requires_grad=False)
        self.kernel = kernel

    def forward(
        self, x: torch.Tensor, residual: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``norm(x)``; with ``residual``, ``(norm(x + residual), x + residual)``."""
        if self.kernel is None:
            return self.forward_native(x, residual)
        out = self.kernel(x, self.weight, self.eps, residual)
        return out if residual is None else (out, residual)

    def forward_native(
        self, x: torch.Tensor, residual: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The torch implementation: the reference a platform's kernel must match."""
        if residual is not None:
            x = x + residual
            residual = x
        # Normalise in fp32 as Hugging Face does, so low precisions match it. Written
        # out: torch's rms_norm on CPU decomposes into more ops than this.
        h = x.float()
        h = h * torch.rsqrt(h.square().mean(-1, keepdim=True) + self.eps)
        out = self.weight * h.to(x.dtype)
        return out if residual is None else (out, residual)
