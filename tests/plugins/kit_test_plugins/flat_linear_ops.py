"""A ``linear`` written for the engine's ``[tokens, hidden]`` activations: it flattens
every leading dim for the product and never puts them back, so a ``[batch, tokens,
hidden]`` input gets ``[batch * tokens, out]``."""

import torch.nn.functional as F
from kit_test_plugins import TestPlatform


def linear(x, weight):
    return F.linear(x.reshape(-1, x.shape[-1]), weight)


class FlatLinearPlatform(TestPlatform):
    custom_ops_module = __name__
