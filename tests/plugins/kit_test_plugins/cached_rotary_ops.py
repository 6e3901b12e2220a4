"""A ``rotary_embedding`` that gathers the cos/sin rows of a batch's positions once
per token count and dtype (as a kernel captured per batch shape does) and reuses
them: a later batch of as many tokens is rotated by the earlier batch's positions."""

import torch
from kit_test_plugins import TestPlatform

_tables: dict = {}


def rotary_embedding(positions, x, cos, sin):
    half = x.shape[-1] // 2
    key = (positions.shape[0], half, x.dtype, x.device)
    c, s = _tables.setdefault(key, (cos[positions][:, None], sin[positions][:, None]))
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)


class CachedRotaryPlatform(TestPlatform):
    custom_ops_module = __name__
