"""``TorchDevicePlatform``: the device runtime of a device torch already knows.

Most accelerators register a torch device module (``torch.cuda``, ``torch.xpu``,
``torch.npu``, a PrivateUse1 backend's module): device count, current device,
memory statistics, events, streams and seeding are already there, under the names
``torch.cuda`` made standard. A platform built on this class forwards the contract's
device runtime to ``torch.get_device_module(device_type)``, so its author declares
identity and capabilities, names the components, and overrides only what the
device module does differently.

Where the device module lacks a function the contract needs, the method raises
``NotImplementedError`` naming the device type, the missing function and the
``Platform`` method to override; ``missing_runtime()`` lists every such gap at once
(``conformance init`` prints it for the device type it is given).
"""

from __future__ import annotations

import functools
import inspect
from types import ModuleType

import torch

from conformance.contract.capabilities import DeviceCapability
from conformance.contract.platform import DeviceEvent, Platform

#: Each forwarded ``Platform`` method and the device-module function it calls.
FORWARDED = {
    "is_available": "is_available",
    "device_count": "device_count",
    "set_device": "set_device",
    "current_device": "current_device",
    "get_device_name": "get_device_name",
    "get_device_total_memory": "get_device_properties",
    "mem_get_info": "mem_get_info",
    "memory_allocated": "memory_allocated",
    "synchronize": "synchronize",
    "Event": "Event",
    "Stream": "Stream",
    "manual_seed_all": "manual_seed_all",
}


class TorchDevicePlatform(Platform):
    """A ``Platform`` whose device runtime is ``torch.<device_type>``'s.

    Subclasses set the identity attributes (``device_name``, ``device_type``,
    ``dispatch_key``, ``dist_backend``), ``capabilities``, and implement
    ``get_attn_backend_cls`` and ``get_device_communicator_cls``. Optional parts of
    the device module are optional here too: without ``get_device_capability`` the
    capability is None (the idea does not apply), without ``empty_cache`` there is
    no cache to release.
    """

    @classmethod
    def device_module(cls) -> ModuleType:
        """``torch.get_device_module(device_type)``, e.g. ``torch.cuda``."""
        return torch.get_device_module(cls.device_type)

    @classmethod
    def _device_function(cls, name: str, method: str):
        function = getattr(cls.device_module(), name, None)
        if not callable(function):
            raise NotImplementedError(
                f"{cls.__name__}: torch.{cls.device_type} has no {name}(), which "
                f"Platform.{method} needs; override {method} in {cls.__name__}"
            )
        return function

    @classmethod
    def missing_runtime(cls) -> dict[str, str]:
        """Each forwarded ``Platform`` method the device module cannot serve, with
        what it lacks (empty when it has everything)."""
        module = cls.device_module()
        missing = {
            method: f"torch.{cls.device_type}.{name}"
            for method, name in FORWARDED.items()
            if not callable(getattr(module, name, None))
        }
        event_cls = getattr(module, "Event", None)
        if callable(event_cls) and not _accepts_keyword(event_cls, "enable_timing"):
            missing["Event"] = f"torch.{cls.device_type}.Event(enable_timing=True)"
        return missing

    @classmethod
    def is_available(cls) -> bool:
        return bool(cls._device_function("is_available", "is_available")())

    @classmethod
    def device_count(cls) -> int:
        return int(cls._device_function("device_count", "device_count")())

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        cls._device_function("set_device", "set_device")(torch.device(device))

    @classmethod
    def current_device(cls) -> int:
        current = cls._device_function("current_device", "current_device")()
        if isinstance(current, int):
            return current
        # torch.cpu answers "cpu": a device, not an index; its index is 0.
        return torch.device(current).index or 0

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return cls._device_function("get_device_name", "get_device_name")(device_id)

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        query = getattr(cls.device_module(), "get_device_capability", None)
        if not callable(query):
            return None
        return DeviceCapability(*query(device_id))

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        properties = cls._device_function("get_device_properties", "get_device_total_memory")
        return int(properties(device_id).total_memory)

    @classmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        free, total = cls._device_function("mem_get_info", "mem_get_info")(device_id)
        return int(free), int(total)

    @classmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        return int(cls._device_function("memory_allocated", "memory_allocated")(device_id))

    @classmethod
    def synchronize(cls, device_id: int | None = None) -> None:
        cls._device_function("synchronize", "synchronize")(device_id)

    @classmethod
    def Event(cls, enable_timing: bool = False) -> DeviceEvent:
        event_cls = cls._device_function("Event", "Event")
        if not enable_timing:
            return event_cls()
        if not _accepts_keyword(event_cls, "enable_timing"):
            raise NotImplementedError(
                f"{cls.__name__}: torch.{cls.device_type}.Event takes no enable_timing, "
                f"which Platform.Event(enable_timing=True) needs; override Event in "
                f"{cls.__name__}"
            )
        return event_cls(enable_timing=True)

    @classmethod
    def Stream(cls):
        return cls._device_function("Stream", "Stream")()

    @classmethod
    def empty_cache(cls) -> None:
        release = getattr(cls.device_module(), "empty_cache", None)
        if callable(release):
            release()

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        cls._device_function("manual_seed_all", "manual_seed_all")(seed)

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        # Pinning is for copies from the host to another device; a host device has none.
        return cls.device_type != "cpu" and _can_pin_memory()


def _accepts_keyword(callable_, name: str) -> bool:
    try:
        parameters = inspect.signature(callable_).parameters
    except (TypeError, ValueError):  # a C type without a signature: assume torch.cuda's shape
        return True
    return name in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


@functools.cache
def _can_pin_memory() -> bool:
    """Whether torch can page-lock a host tensor here (it needs an accelerator's
    host allocator), found by trying once."""
    try:
        return torch.empty(1).pin_memory().is_pinned()
    except RuntimeError:
        return False
