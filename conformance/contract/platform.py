"""The ``Platform`` contract: what a hardware plugin must provide.

A platform is a class, never instantiated, with class attributes for its identity and
capabilities and classmethods for everything else (as vLLM's ``Platform``). Each
method's docstring states its rule: what a conformant implementation must do. The
Platform suite checks those rules; the other suites build on them.

Methods are abstract where only the plugin can know the answer, and have a default only
where that default is right for every device.
"""

from __future__ import annotations

import abc
import contextlib
import random
from typing import TYPE_CHECKING, ClassVar, Protocol

import torch

from conformance.contract.capabilities import DeviceCapability, PlatformCapabilities

if TYPE_CHECKING:
    from conformance.contract.attention import AttentionSelectorConfig
    from conformance.contract.config import EngineConfig


class DeviceEvent(Protocol):
    """The event object ``Platform.Event`` returns (``torch.cuda.Event``'s shape)."""

    def record(self, stream=None) -> None: ...
    def query(self) -> bool: ...
    def synchronize(self) -> None: ...
    def elapsed_time(self, end_event: DeviceEvent) -> float: ...


class Platform(abc.ABC):
    """Base class of every platform plugin.

    Subclasses set the identity attributes and ``capabilities`` and implement the
    abstract classmethods. The engine is handed the class (``LLM(platform=...)``
    passes it down through ``EngineConfig.platform``) and never looks it up in a
    global, so engines on different platforms can share a process.

    Rule ``platform.identity.device_type``: ``device_type`` is a device type torch
    accepts, and tensors made on the platform's device report it.

    Rule ``platform.identity.dispatch_key``: ``dispatch_key`` names a PyTorch dispatch
    key that the device's tensors carry.

    Rule ``platform.identity.dist_backend``: ``dist_backend`` is a
    ``torch.distributed`` backend available in this install.

    Rule ``platform.identity.names``: ``device_name`` and ``get_device_name()`` are
    non-empty strings, and ``get_device_capability()`` is a ``DeviceCapability`` or
    None.

    The Engine suite judges the pieces together: the engine (the reference ``LLM``,
    or the one ``engine_cls`` names) on this platform against the same engine on the
    reference platform, "by the dtype's rule": in float32 token for token; in half
    dtypes the same tokens until the first position where the runs pick differently,
    where each pick must be among the other run's top-N logprobs.

    Rule ``engine.generate.fp32_greedy``: in float32, greedy generation of a batch of
    prompts gives exactly the reference platform's tokens, with logprobs within
    float32's tolerance.

    Rule ``engine.generate.half_logprobs_close``: in bfloat16 and float16, greedy
    generation follows the reference platform's tokens by the dtype's rule (the
    comparison stops at the first differing pick), and before that logprobs of
    tokens both runs report are within the dtype's tolerance.

    Rule ``engine.generate.block_sizes``: greedy generation in every other declared
    block size, and with the cache in every declared KV-cache dtype, follows the
    reference platform's (in the suite's block size, its cache in the model dtype) by
    the rule of the model dtype or, where coarser, of the cache dtype: paging and the
    cache's dtype must not change what the model computes beyond that dtype's rounding.

    Rule ``engine.generate.sampling_params``: seeded requests with temperature,
    ``top_k``, ``top_p`` and ``logprobs=N`` generate only tokens inside their filters
    (a ``top_k`` request's token is among its own top k logprobs) and follow the
    reference platform's: in float32 token for token, in half dtypes until a draw
    flips with rounding; the logprobs of the chosen and the top-N tokens are within
    the dtype's tolerance until then. Each parameter means what ``SamplingParams``
    says at its boundary values too (``top_k=-1``, a ``top_k`` beyond the vocabulary,
    ``top_p=1``, ``logprobs=0``, a temperature of 1e-5), and every generated token
    comes with exactly the logprobs its request's ``logprobs=N`` asks for.

    Rule ``engine.generate.batch_invariance``: a request generates the same
    completion alone as in a batch with others: greedy by the dtype's rule, and a
    seeded sampled request with identical tokens.

    Rule ``engine.parallel.tensor_parallel``: where the plugin declares
    ``tensor_parallel`` with a max world size of at least 2, a tensor-parallel engine
    of 2 ranks (one spawned process each) generates the reference platform's greedy
    tokens of one rank, by the dtype's rule (float32 may differ only at a near-tie, as
    the reduction order changes).
    """

    # -- identity -------------------------------------------------------------------
    #: Human-readable name of the device family, e.g. ``"cuda"`` or ``"Ascend NPU"``.
    device_name: ClassVar[str]
    #: A torch device type: ``torch.device(device_type)`` must accept it.
    device_type: ClassVar[str]
    #: The PyTorch dispatch key of the device's tensors, e.g. ``"CUDA"``.
    dispatch_key: ClassVar[str]
    #: A ``torch.distributed`` backend available for this device (``"gloo"``, ``"nccl"``).
    dist_backend: ClassVar[str]
    #: Environment variable that selects visible devices, or None if there is none.
    device_control_env_var: ClassVar[str | None] = None
    #: What the platform declares it supports; everything else must be refused.
    capabilities: ClassVar[PlatformCapabilities]
    #: Import path of a module of the platform's own kernels for the model's per-token
    #: ops (RMSNorm, RoPE, SiLU-and-mul, linear; signatures and rules in
    #: ``conformance.contract.custom_ops``), or None for torch's.
    custom_ops_module: ClassVar[str | None] = None

    # -- device runtime -------------------------------------------------------------
    @classmethod
    @abc.abstractmethod
    def is_available(cls) -> bool:
        """Whether at least one device of this platform is usable in this process.

        Rule ``platform.runtime.availability``: ``is_available()`` returns (never
        raises) True on the machine under test, and then ``device_count()`` is at
        least 1.
        """

    @classmethod
    @abc.abstractmethod
    def device_count(cls) -> int:
        """Number of visible devices (at least 1 whenever ``is_available()``).

        Devices, not ranks: several ranks may share one device (the engine puts rank
        ``r`` on device ``r % device_count()``), so a one-device platform answers 1
        and still runs tensor parallel over a backend that allows it (gloo).
        """

    @classmethod
    @abc.abstractmethod
    def set_device(cls, device: torch.device) -> None:
        """Make ``device`` current for this process.

        Rule ``platform.runtime.current_device``: after
        ``set_device(torch.device(device_type, i))``, ``current_device()`` returns
        ``i``, for every ``i`` below ``device_count()``.

        Rule ``engine.parallel.tensor_parallel``: several processes may set the same
        device at once (ranks sharing a device each do), and each computes on it.
        """

    @classmethod
    @abc.abstractmethod
    def current_device(cls) -> int:
        """Index of the current device of this process."""

    @classmethod
    @abc.abstractmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        """Marketing name of device ``device_id`` (goes into result records)."""

    @classmethod
    @abc.abstractmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        """Compute capability of device ``device_id``, or None where the idea does
        not apply (CPUs)."""

    @classmethod
    @abc.abstractmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        """Total memory of device ``device_id`` in bytes (see ``mem_get_info``)."""

    @classmethod
    @abc.abstractmethod
    def mem_get_info(cls, device_id: int = 0) -> tuple[int, int]:
        """``(free, total)`` bytes of device ``device_id``.

        Rule ``platform.runtime.mem_get_info``: ``mem_get_info()`` is ``(free, total)``
        with 0 <= free <= total, and total is ``get_device_total_memory()``, which
        is positive; both are bytes: the total is at least the size of a tensor the
        device holds while it is read.
        """

    @classmethod
    @abc.abstractmethod
    def memory_allocated(cls, device_id: int = 0) -> int:
        """Bytes currently held by tensors of this process on device ``device_id``.

        Rule ``platform.runtime.memory``: ``memory_allocated()`` grows by at least a
        tensor's size while it lives and falls back by at least half of it once the
        tensor is released, and ``empty_cache()`` does not raise; it counts live
        tensors, not what an allocator keeps for reuse: many small tensors released
        out of order (most of them, a few still alive between them) take it down by
        at least half of their size too.

        The Worker suite relies on this to check memory profiling and that shutdown
        gives memory back.
        """

    @classmethod
    @abc.abstractmethod
    def synchronize(cls, device_id: int | None = None) -> None:
        """Block until all work queued on the device has finished.

        Rule ``platform.runtime.synchronize``: after ``synchronize()``, every event
        recorded before it has completed.
        """

    @classmethod
    @abc.abstractmethod
    def Event(cls, enable_timing: bool = False) -> DeviceEvent:
        """A new device event (``record``, ``query``, ``synchronize``, ``elapsed_time``).

        Rule ``platform.runtime.events``: after its own ``synchronize()`` a recorded
        event's ``query()`` is True; with timing enabled, ``elapsed_time`` between
        events recorded in order is a non-negative number, and ordered (a later end
        event never reports less time than an earlier one); it is in milliseconds, as
        torch's is: between two events recorded on an idle device around a host wait
        of ``w`` ms, at least ``w / 2`` and at most twice the time the host measured
        from the first record to the second event's completion.
        """

    @classmethod
    @abc.abstractmethod
    def Stream(cls):
        """A new stream of the device (``torch.cuda.Stream``'s shape).

        Rule ``platform.runtime.stream``: ``Stream()`` returns a new object (never
        None), and where torch has a stream context manager for the device type
        (``torch.<device_type>.stream``), ``with torch.<device_type>.stream(
        platform.Stream()):`` enters and leaves without error.
        """

    @classmethod
    @abc.abstractmethod
    def empty_cache(cls) -> None:
        """Release cached, unused device memory to the device (see
        ``memory_allocated``)."""

    @classmethod
    @abc.abstractmethod
    def manual_seed_all(cls, seed: int) -> None:
        """Seed the random generators of every device.

        Rule ``platform.runtime.seeding``: the same seed, given to ``manual_seed_all``
        or to ``seed_everything``, makes ``torch.rand(..., device=...)`` produce the
        same tensor again, and another seed another tensor (a seed that is ignored
        would reproduce too). Seed 0, the engine's default, seeds as any other does.
        """

    @classmethod
    def seed_everything(cls, seed: int) -> None:
        """Seed Python's, torch's host and every device's generator."""
        random.seed(seed)
        torch.manual_seed(seed)
        cls.manual_seed_all(seed)

    @classmethod
    @abc.abstractmethod
    def is_pin_memory_available(cls) -> bool:
        """Whether host tensors can be page-locked for fast copies to the device.

        Rule ``platform.runtime.pin_memory``: when ``is_pin_memory_available()`` is
        True, ``tensor.pin_memory()`` on a host tensor succeeds and the result is
        pinned.
        """

    @classmethod
    def inference_mode(cls) -> contextlib.AbstractContextManager:
        """Context manager the engine runs the model under (no autograd)."""
        return torch.inference_mode()

    # -- factories --------------------------------------------------------------------
    @classmethod
    @abc.abstractmethod
    def get_attn_backend_cls(cls, config: AttentionSelectorConfig) -> str:
        """Qualified name of the ``AttentionBackend`` subclass for ``config``.

        Rule ``platform.factories.attention_backend``: for every declared
        configuration, the name imports, names an ``AttentionBackend`` subclass, and
        that backend's ``validate_configuration`` accepts the configuration.

        Rule ``platform.factories.attention_refusal``: for a head size, dtype or block
        size outside the declared set, ``get_attn_backend_cls`` raises ``ValueError``
        naming the reason instead of naming a backend.
        """

    @classmethod
    def get_worker_cls(cls) -> str:
        """Qualified name of the ``WorkerBase`` subclass the executor instantiates.

        The default is the reference engine's generic ``Worker``, which reaches the
        device only through the platform in its config; override it for a custom
        worker.

        Rule ``platform.factories.worker``: ``get_worker_cls()`` names an importable,
        concrete ``WorkerBase`` subclass.
        """
        return "conformance.reference_engine.worker.worker.Worker"

    @classmethod
    @abc.abstractmethod
    def get_device_communicator_cls(cls) -> str:
        """Qualified name of the ``DeviceCommunicatorBase`` subclass for this device.

        Rule ``platform.factories.communicator``: ``get_device_communicator_cls()``
        names an importable, concrete ``DeviceCommunicatorBase`` subclass.
        """

    @classmethod
    def engine_cls(cls) -> str | None:
        """Qualified name of the engine the Engine suite judges on this platform, or
        None (the default) for the reference engine's ``LLM`` driving the plugin's
        pieces, which is what a plugin of this contract is.

        Only a bridge to another inference engine names one (the vLLM bridge names
        ``vllm.LLM`` behind an adapter): there the plugin's engine is that engine,
        and the kit's would not be what users run. The named class has the reference
        ``LLM``'s interface: its constructor keywords (``model``, ``dtype``,
        ``platform``, ``block_size``, ``max_model_len``, ``max_num_seqs``,
        ``tensor_parallel_size``, ``distributed_executor_backend``);
        ``generate(prompts, params, use_tqdm=False)`` with prompts
        ``{"prompt_token_ids": [...]}``, returning outputs whose ``outputs[0]`` has
        ``token_ids`` and per-step ``logprobs`` (``{token_id: obj}``, ``obj.logprob``);
        and ``shutdown()``. The reference side of every comparison stays the kit's
        engine on the reference platform.
        """
        return None

    # -- config hooks -----------------------------------------------------------------
    @classmethod
    def check_and_update_config(cls, config: EngineConfig) -> None:
        """Refuse or adjust an engine configuration before anything is built.

        Rule ``platform.config.check_and_update``: a config of every declared dtype,
        KV-cache dtype and block size is accepted, and may be adjusted in place but
        stays within the declared set; a dtype, KV-cache dtype, block size,
        tensor-parallel size or model architecture outside the declared capabilities
        raises ``ValueError``.
        """
        caps = cls.capabilities
        if config.dtype not in caps.dtypes:
            raise ValueError(
                f"{cls.device_name}: dtype {config.dtype} is not supported "
                f"(declared: {', '.join(map(str, caps.dtypes))})"
            )
        if config.kv_cache_dtype not in caps.kv_cache_dtypes:
            raise ValueError(
                f"{cls.device_name}: kv-cache dtype {config.kv_cache_dtype!r} is not "
                f"supported (declared: {', '.join(caps.kv_cache_dtypes)})"
            )
        if config.block_size not in caps.block_sizes:
            raise ValueError(
                f"{cls.device_name}: block size {config.block_size} is not supported "
                f"(declared: {', '.join(map(str, caps.block_sizes))})"
            )
        if config.tensor_parallel_size > caps.max_world_size:
            raise ValueError(
                f"{cls.device_name}: tensor_parallel_size {config.tensor_parallel_size} "
                f"exceeds the declared max world size {caps.max_world_size}"
            )
        cls.verify_model_arch(config.architecture)
        cls.verify_quantization(config.quantization)

    @classmethod
    def verify_model_arch(cls, arch: str) -> None:
        """Raise ``ValueError`` naming ``arch`` unless it is a declared architecture.

        Rule ``platform.config.model_arch``: ``verify_model_arch`` accepts every
        declared architecture and raises a ``ValueError`` naming any other (a
        mixture-of-experts model, say).
        """
        if arch not in cls.capabilities.model_architectures:
            raise ValueError(
                f"{cls.device_name}: model architecture {arch!r} is not supported "
                f"(declared: {', '.join(cls.capabilities.model_architectures)})"
            )

    @classmethod
    def verify_quantization(cls, quant: str | None) -> None:
        """Raise ``ValueError`` naming ``quant`` unless it is None (unquantized) or a
        declared quantization method.

        Rule ``platform.config.quantization``: ``verify_quantization`` accepts None and
        every declared method and raises a ``ValueError`` naming any other.
        """
        if quant is not None and quant not in cls.capabilities.quantizations:
            declared = ", ".join(cls.capabilities.quantizations) or "none"
            raise ValueError(
                f"{cls.device_name}: quantization {quant!r} is not supported "
                f"(declared: {declared})"
            )

    # -- helpers built on the contract --------------------------------------------------
    @classmethod
    def refuse_undeclared_attention(cls, config: AttentionSelectorConfig) -> None:
        """Raise ``ValueError`` when ``config`` lies outside the declared capabilities;
        ``get_attn_backend_cls`` implementations call this first."""
        caps = cls.capabilities
        reasons = []
        if config.head_size not in caps.head_sizes:
            reasons.append(f"head size {config.head_size} (declared: {caps.head_sizes})")
        if config.dtype not in caps.dtypes:
            reasons.append(f"dtype {config.dtype}")
        if config.block_size not in caps.block_sizes:
            reasons.append(f"block size {config.block_size} (declared: {caps.block_sizes})")
        if config.kv_cache_dtype not in caps.kv_cache_dtypes:
            reasons.append(f"kv-cache dtype {config.kv_cache_dtype!r}")
        if config.sliding_window is not None and not caps.supports("sliding_window"):
            reasons.append("sliding window (feature not declared)")
        if config.logits_soft_cap is not None and not caps.supports("logits_soft_cap"):
            reasons.append("logits soft cap (feature not declared)")
        reasons += config.non_positive_features()
        if reasons:
            raise ValueError(
                f"{cls.device_name}: attention configuration not supported: "
                + "; ".join(reasons)
            )

    @classmethod
    def torch_device(cls, index: int | None = None) -> torch.device:
        """The ``torch.device`` of device ``index`` (the current one when None)."""
        return torch.device(cls.device_type, cls.current_device() if index is None else index)
