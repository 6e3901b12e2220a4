"""An RMSNorm kernel with the eps of the model it was written for built in: it ignores
the eps it is passed, which shows only on rows whose mean square is near that eps."""

import torch
from kit_test_plugins import TestPlatform

BUILT_IN_EPS = 1e-6


def rms_norm(x, weight, eps, residual=None):
    if residual is not None:
        residual.add_(x)
        x = residual
    h = x.float()
    h = h * torch.rsqrt(h.square().mean(-1, keepdim=True) + BUILT_IN_EPS)
    return weight * h.to(x.dtype)


class FixedEpsPlatform(TestPlatform):
    custom_ops_module = __name__
