"""Platform suite, identity: the names torch and torch.distributed must accept."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist


@pytest.mark.contract("platform.identity.device_type")
def test_device_type_is_a_torch_device(platform):
    """``device_type`` is a device type torch accepts, and tensors made on the
    platform's device report it."""
    torch.device(platform.device_type)  # raises for an unknown type
    tensor = torch.empty(1, device=platform.torch_device())
    assert tensor.device.type == platform.device_type


@pytest.mark.contract("platform.identity.dispatch_key")
def test_dispatch_key_matches_device_tensors(platform, device):
    """``dispatch_key`` names a PyTorch dispatch key that the device's tensors carry."""
    key = getattr(torch._C.DispatchKey, platform.dispatch_key, None)
    assert key is not None, f"{platform.dispatch_key!r} is not a PyTorch dispatch key"
    keys = torch._C._dispatch_keys(torch.empty(1, device=device))
    assert keys.has(key), f"device tensors carry {keys}, not {platform.dispatch_key}"


@pytest.mark.contract("platform.identity.dist_backend")
def test_dist_backend_is_available(platform):
    """``dist_backend`` is a ``torch.distributed`` backend available in this install."""
    assert dist.is_available(), "torch.distributed is not available in this torch build"
    assert dist.is_backend_available(platform.dist_backend), (
        f"torch.distributed has no backend {platform.dist_backend!r}"
    )


@pytest.mark.contract("platform.identity.names")
def test_device_names_and_capability(platform):
    """``device_name`` and ``get_device_name()`` are non-empty strings and
    ``get_device_capability()`` is a ``DeviceCapability`` or None."""
    from conformance.contract.capabilities import DeviceCapability

    assert isinstance(platform.device_name, str) and platform.device_name
    name = platform.get_device_name(platform.current_device())
    assert isinstance(name, str) and name.strip(), f"device name {name!r}"
    capability = platform.get_device_capability(platform.current_device())
    assert capability is None or isinstance(capability, DeviceCapability), capability
