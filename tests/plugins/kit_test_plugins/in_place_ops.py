"""An ``rms_norm`` that normalises ``x`` in place and returns it, to save an
allocation: its results are right, but the caller's ``x`` is gone (the engine's
first layer keeps it as the residual stream)."""

import torch
from kit_test_plugins import TestPlatform


def rms_norm(x, weight, eps, residual=None):
    if residual is not None:
        residual.add_(x)
        x.copy_(residual)
    h = x.float()
    x.copy_(weight * (h * torch.rsqrt(h.square().mean(-1, keepdim=True) + eps)).to(x.dtype))
    return x


class InPlaceRmsNormPlatform(TestPlatform):
    custom_ops_module = __name__
