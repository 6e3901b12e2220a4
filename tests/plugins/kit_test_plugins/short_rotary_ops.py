"""A rotary kernel whose tile was written for heads of up to 64 dims: on a larger
head it rotates the first 32 pairs and copies the rest through unrotated, so only a
platform's larger declared head sizes see the bug."""

from kit_test_plugins import TestPlatform

TILE_PAIRS = 32


def rotary_embedding(positions, x, cos, sin):
    half = x.shape[-1] // 2
    pairs = min(half, TILE_PAIRS)
    c, s = cos[positions][:, None, :pairs], sin[positions][:, None, :pairs]
    h = x.float()
    out = h.clone()
    x1, x2 = h[..., :pairs], h[..., half:half + pairs]
    out[..., :pairs] = x1 * c - x2 * s
    out[..., half:half + pairs] = x2 * c + x1 * s
    return out.to(x.dtype)


class ShortRotaryPlatform(TestPlatform):
    custom_ops_module = __name__
