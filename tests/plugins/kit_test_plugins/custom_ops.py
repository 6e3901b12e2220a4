"""Platforms whose ``custom_ops_module`` is broken: one names a module that does not
exist, the other (this module) an RMSNorm that forgets to update the residual."""

import torch
from kit_test_plugins import TestPlatform


def rms_norm(x, weight, eps, residual=None):
    """Normalises ``x + residual`` but leaves ``residual`` as it was: every later layer
    then adds to a stale residual stream."""
    h = (x if residual is None else x + residual).float()
    h = h * torch.rsqrt(h.square().mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


class StaleResidualPlatform(TestPlatform):
    custom_ops_module = __name__


class MissingOpsModulePlatform(TestPlatform):
    custom_ops_module = "kit_test_plugins.no_such_ops_module"
