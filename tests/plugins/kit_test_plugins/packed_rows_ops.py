"""A rotary kernel written for packed rows, as a kernel handed only a data pointer
is: right on the freshly allocated tensors a test draws, wrong on the views a model
passes (the query and key of a fused QKV projection), whose rows lie further apart
than their width."""

import torch
from kit_test_plugins import TestPlatform


def _rows_as_packed(x: torch.Tensor) -> torch.Tensor:
    """``x``'s elements as a kernel that assumes packed rows reads them."""
    return torch.as_strided(x, x.shape, torch.empty(x.shape, device="meta").stride(), x.storage_offset())


def rotary_embedding(positions, x, cos, sin):
    x = _rows_as_packed(x)
    half = x.shape[-1] // 2
    c, s = cos[positions][:, None, :], sin[positions][:, None, :]
    h = x.float()
    x1, x2 = h[..., :half], h[..., half:]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)


class PackedRowsPlatform(TestPlatform):
    custom_ops_module = __name__
