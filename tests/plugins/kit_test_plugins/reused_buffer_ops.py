"""A ``silu_and_mul`` that writes into an output buffer it keeps per shape, dtype and
device, to save an allocation per call, and returns that buffer: the next call of the
same shape overwrites what the last one returned."""

import torch
import torch.nn.functional as F
from kit_test_plugins import TestPlatform

_buffers: dict = {}


def silu_and_mul(x):
    half = x.shape[-1] // 2
    out = _buffers.setdefault((tuple(x.shape[:-1]) + (half,), x.dtype, x.device),
                              torch.empty(*x.shape[:-1], half, dtype=x.dtype, device=x.device))
    return torch.mul(F.silu(x[..., :half]), x[..., half:], out=out)


class ReusedBufferPlatform(TestPlatform):
    custom_ops_module = __name__
