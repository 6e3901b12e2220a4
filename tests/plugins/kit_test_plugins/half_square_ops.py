"""An RMSNorm kernel that squares and averages in the input's dtype (no float32
upcast): right for rows of unit scale, off for small rows in float16 (their squares
lose their precision) and for large ones (their squares overflow to inf)."""

import torch
from kit_test_plugins import TestPlatform


def rms_norm(x, weight, eps, residual=None):
    if residual is not None:
        residual.add_(x)
        x = residual
    h = x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
    return weight * h


class HalfSquarePlatform(TestPlatform):
    custom_ops_module = __name__
