"""Platform suite, identity: the names torch and torch.distributed must accept."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist


@pytest.mark.contract("platform.identity.device_type")
def test_device_type_is_a_torch_device(platform, device):
    """Builds ``torch.device(device_type)`` and a one-element tensor on device 0,
    and compares the tensor's ``device.type`` with ``device_type``."""
    torch.device(platform.device_type)  # raises for an unknown type
    tensor = torch.empty(1, device=device)
    assert tensor.device.type == platform.device_type


@pytest.mark.contract("platform.identity.dispatch_key")
def test_dispatch_key_matches_device_tensors(platform, device):
    """Looks ``dispatch_key`` up in ``torch._C.DispatchKey`` and checks that the
    dispatch key set of a one-element tensor on the device has it."""
    key = getattr(torch._C.DispatchKey, platform.dispatch_key, None)
    assert key is not None, f"{platform.dispatch_key!r} is not a PyTorch dispatch key"
    keys = torch._C._dispatch_keys(torch.empty(1, device=device))
    assert keys.has(key), f"device tensors carry {keys}, not {platform.dispatch_key}"


@pytest.mark.contract("platform.identity.dist_backend")
def test_dist_backend_is_available(platform):
    """Checks ``dist.is_available()`` and then
    ``dist.is_backend_available(dist_backend)`` in the installed torch."""
    assert dist.is_available(), "torch.distributed is not available in this torch build"
    assert dist.is_backend_available(platform.dist_backend), (
        f"torch.distributed has no backend {platform.dist_backend!r}"
    )


@pytest.mark.contract("platform.identity.names")
def test_device_names_and_capability(platform):
    """Reads ``device_name``, and ``get_device_name`` and ``get_device_capability`` of
    device 0, and checks their types: non-blank strings, a ``DeviceCapability`` or
    None."""
    from conformance.contract.capabilities import DeviceCapability

    assert isinstance(platform.device_name, str) and platform.device_name
    name = platform.get_device_name(0)
    assert isinstance(name, str) and name.strip(), f"device name {name!r}"
    capability = platform.get_device_capability(0)
    assert capability is None or isinstance(capability, DeviceCapability), capability
