"""Platform suite, capabilities: the declaration every other suite reads."""

from __future__ import annotations

import pytest
import torch

from conformance.contract.capabilities import PlatformCapabilities


@pytest.mark.contract("platform.capabilities.well_formed")
def test_capabilities_are_well_formed(capabilities):
    """Checks the fixture's type and runs ``PlatformCapabilities.validate`` on it,
    failing with every problem the validation lists."""
    assert isinstance(capabilities, PlatformCapabilities), type(capabilities)
    problems = capabilities.validate()
    assert not problems, "; ".join(problems)


@pytest.mark.contract("platform.capabilities.dtypes_compute")
def test_declared_dtypes_compute(capabilities, device):
    """Multiplies a 3x4 by a 4x2 matrix of small integers on the device in every
    declared dtype; checks the product's dtype and device and compares its values
    exactly with the float64 host product."""
    left = torch.arange(12, dtype=torch.float64).reshape(3, 4) % 5
    right = torch.arange(8, dtype=torch.float64).reshape(4, 2) % 3
    expected = left @ right
    for dtype in capabilities.dtypes:
        product = left.to(device=device, dtype=dtype) @ right.to(device=device, dtype=dtype)
        assert product.dtype == dtype and product.device.type == device.type
        assert torch.equal(product.cpu().double(), expected), f"wrong product in {dtype}"
