"""The kit ``Platform`` generated around a vLLM platform instance.

Every method asks vLLM's platform. Where vLLM's class declares the method, its answer
is judged by the kit's rules as it stands. Where it does not, vLLM's ``Platform.
__getattr__`` forwards the name to ``torch.<device_type>`` or returns None, and vLLM's
own code relies on that; the bridge follows the forward too, but when it yields nothing
usable (None, a call that raises, or an answer of another type than the kit's
contract), the call fails with ``VllmInterfaceGap`` saying "vLLM's Platform has no X
(...)". The gap is never filled in with kit code: the kit would be testing itself.
"""

from __future__ import annotations

import inspect
from typing import ClassVar

import torch

from conformance.bridges.vllm import attention, communicator
from conformance.bridges.vllm import config as child_config
from conformance.bridges.vllm.capabilities import derive_capabilities, selector_config
from conformance.bridges.vllm.errors import VllmInterfaceGap
from conformance.contract.capabilities import DeviceCapability
from conformance.contract.platform import Platform


class VllmBridgedPlatform(Platform):
    """Base of the generated classes; ``vllm_platform`` is vLLM's platform instance
    (vLLM's ``current_platform`` is an instance: its properties and ``__getattr__``
    work only there)."""

    vllm_platform: ClassVar[object]

    @classmethod
    def _vllm(cls, name: str, *args, returns: type | tuple[type, ...] | None = None, **kwargs):
        """Call vLLM's ``name``: declared, as is; forwarded by ``__getattr__``, only
        when the forward gives what the kit's contract asks for."""
        if inspect.getattr_static(type(cls.vllm_platform), name, None) is not None:
            return getattr(cls.vllm_platform, name)(*args, **kwargs)
        runtime = f"torch.{cls.device_type}"
        target = getattr(cls.vllm_platform, name)
        if target is None:
            raise VllmInterfaceGap(
                f"vLLM's Platform has no {name} (it returns None: {runtime} has no {name})")
        try:
            result = target(*args, **kwargs)
        except Exception as exc:
            raise VllmInterfaceGap(
                f"vLLM's Platform has no {name} (it forwards to {runtime}.{name}, which "
                f"raises {type(exc).__name__}: {exc})") from exc
        if returns is not None and not isinstance(result, returns):
            raise VllmInterfaceGap(
                f"vLLM's Platform has no {name} (it forwards to {runtime}.{name}, which "
                f"returns {result!r}, a {type(result).__name__}, where the kit's contract "
                f"returns {_type_names(returns)})")
        return result

    # -- device runtime -------------------------------------------------------------
    @classmethod
    def is_available(cls) -> bool:
        return cls._vllm("is_available", returns=bool)

    @classmethod
    def device_count(cls) -> int:
        return cls._vllm("device_count", returns=int)

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        cls._vllm("set_device", device)

    @classmethod
    def current_device(cls) -> int:
        return cls._vllm("current_device", returns=int)

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return cls._vllm("get_device_name", device_id, returns=str)

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        capability = cls._vllm("get_device_capability", device_id)
        return None if capability is None else DeviceCapability(capability.major, capability.minor)

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return cls._vllm("get_device_total_memory", device_id, returns=int)

    @classmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        return cls._vllm("mem_get_info", device_id, returns=tuple)

    @classmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        return cls._vllm("memory_allocated", device_id, returns=int)

    @classmethod
    def synchronize(cls, device_id: int | None = None) -> None:
        cls._vllm("synchronize", *(() if device_id is None else (device_id,)))

    @classmethod
    def Event(cls, enable_timing: bool = False):
        # Only what the caller asked for: torch.cpu.Event takes no arguments at all.
        return cls._vllm("Event", **({"enable_timing": True} if enable_timing else {}))

    @classmethod
    def Stream(cls):
        return cls._vllm("Stream")

    @classmethod
    def empty_cache(cls) -> None:
        cls._vllm("empty_cache")

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        cls._vllm("manual_seed_all", seed)

    @classmethod
    def seed_everything(cls, seed: int) -> None:
        # vLLM's equivalent left Platform in 0.16 for this function.
        from vllm.utils.torch_utils import set_random_seed

        set_random_seed(seed)

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        return cls._vllm("is_pin_memory_available", returns=bool)

    @classmethod
    def inference_mode(cls):
        return cls._vllm("inference_mode")

    @classmethod
    def torch_device(cls, index: int | None = None) -> torch.device:
        # As vLLM builds its devices (torch.device(device_type[, local_rank])), not from
        # current_device(), whose forward the Platform suite judges on its own.
        return torch.device(cls.device_type, index) if index is not None else torch.device(cls.device_type)

    # -- factories --------------------------------------------------------------------
    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        selected = cls._vllm("get_attn_backend_cls", None, selector_config(
            config.head_size, config.dtype, config.block_size, config.kv_cache_dtype,
            sliding_window=config.sliding_window is not None), None, returns=str)
        # The class vLLM's selector would import, by the name the plugin returns (a
        # bad name fails here, naming it), never looked up again by its get_name().
        attention.vllm_backend_class(selected)
        return attention.bridged_name(selected)

    @classmethod
    def get_worker_cls(cls) -> str:
        raise VllmInterfaceGap(
            "vLLM's Platform has no get_worker_cls (check_and_update_config sets "
            "parallel_config.worker_cls instead, and vLLM's worker takes vLLM's own "
            "scheduler output: the Worker suite does not apply)")

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        # vLLM's must name a class that imports; the kit's drives it in every rank.
        communicator.vllm_communicator_class(cls._vllm("get_device_communicator_cls", returns=str))
        return f"{communicator.__name__}.VllmCommunicator"

    @classmethod
    def engine_cls(cls) -> str:
        # The plugin's engine is vLLM's: the Engine suite judges vllm.LLM on it.
        return "conformance.bridges.vllm.engine.VllmLLM"

    # -- config hooks -----------------------------------------------------------------
    @classmethod
    def check_and_update_config(cls, config) -> None:
        child_config.check_and_update_in_child(cls.__qualname__, config)

    @classmethod
    def verify_model_arch(cls, arch: str) -> None:
        cls._vllm("verify_model_arch", arch)

    @classmethod
    def verify_quantization(cls, quant: str | None) -> None:
        cls._vllm("verify_quantization", quant)


def _type_names(types) -> str:
    return " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))


def bridge_platform(name: str, vllm_platform) -> type[VllmBridgedPlatform]:
    """The kit platform of vLLM's platform plugin ``name``, importable as
    ``conformance.bridges.vllm.bridged:NAME`` (so rank processes can unpickle it)."""
    control = vllm_platform.device_control_env_var
    return type(name, (VllmBridgedPlatform,), {
        "__module__": "conformance.bridges.vllm.bridged",
        "__qualname__": name,
        "__doc__": f"vLLM's {type(vllm_platform).__qualname__}, under the kit's contract.",
        "vllm_platform": vllm_platform,
        "device_name": vllm_platform.device_name,
        "device_type": vllm_platform.device_type,
        "dispatch_key": vllm_platform.dispatch_key,
        "dist_backend": vllm_platform.dist_backend,
        # vLLM's default is a placeholder name where the kit's contract says None.
        "device_control_env_var": None if control.endswith("_PLACEHOLDER") else control,
        "capabilities": derive_capabilities(vllm_platform),
    })
