"""vLLM's attention backends under the kit's ``AttentionBackend`` contract.

``attention.bridged_name(QUALNAME)`` is the kit backend around the vLLM backend class
the plugin's ``get_attn_backend_cls`` names, imported by that qualified name as vLLM's
selector imports it (``resolve_obj_by_qualname``), whatever its ``get_name()`` says: a
vendor's subclass that keeps the stock name is the vendor's class under test. The
kit's name encodes the qualified name (``conformance.bridges.vllm.attention:
vllm__v1__attention__backends__cpu_attn__CPUAttentionBackend``), so it is importable
in every process.

Every forward goes through what vLLM's engine builds for one decoder layer: a
``VllmConfig`` of the batch's dtype and block size (when the plugin's config hook
changes either, vLLM never runs the batch as asked, and the test fails naming the
hook's change: ``config_changes``), an ``Attention`` layer built under
it (its impl reads the current config, and its prefix registers it where the metadata
builder finds its heads and window), the layer's KV-cache spec, the backend's metadata
builder run on a ``CommonAttentionMetadata`` made from the kit's metadata, then the
impl's ``do_kv_cache_update`` and ``forward``. The kit's ``query``, ``key``, ``value``
and ``output`` go to vLLM as they are, so whatever vLLM does to them is what the
Attention suite judges.

The cache: the kit hands a logical ``(2, num_blocks, block_size, num_kv_heads,
head_size)`` cache, which its ``kv_cache`` rules inspect slot by slot; vLLM's cache is
whatever its writer makes of the nominal spec shape (CPU_ATTN packs each block per
ISA). The bridge fills vLLM's cache from the kit's with vLLM's own writer (every slot's
key and value through ``do_kv_cache_update``) and, after ``forward``, copies it back
into the kit's tensor through the inverse of that writer's placement (``packing``).
So ``attention.kv_cache.write`` judges which slots vLLM's writer fills and with what;
where within a block it puts them is judged by the forward rules, as vLLM's kernel
reads them from there.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import warnings
from typing import ClassVar

import torch

from conformance.bridges.vllm.config import build_vllm_config, restored_environment
from conformance.bridges.vllm.config_changes import refuse_changed
from conformance.bridges.vllm.errors import BridgeLimitation, named_class, plugin_label
from conformance.bridges.vllm.packing import derive_unpacking
from conformance.contract.attention import (
    AttentionBackend,
    AttentionImpl,
    AttentionMetadata,
    AttentionSelectorConfig,
)

#: The kit model whose config.json the ``ModelConfig`` reads. The attention layers take
#: their heads from the kit's impl, not from the model: any valid model would do.
MODEL = "tiny"
#: The one layer of each bridged impl, named as in a Llama model (the name registers
#: the layer in the config's forward context, so each impl gets its own number).
LAYER_NAME = "model.layers.{}.self_attn.attn"
_layer_numbers = itertools.count()


class VllmBridgedBackend(AttentionBackend):
    """Base of the generated backends; ``vllm_backend`` is vLLM's backend class."""

    vllm_backend: ClassVar[type]
    impl_cls: ClassVar[type[VllmBridgedImpl]]

    @classmethod
    def get_name(cls) -> str:
        return cls.vllm_backend.get_name()

    @classmethod
    def get_impl_cls(cls) -> type[VllmBridgedImpl]:
        return cls.impl_cls

    @staticmethod
    def get_kv_cache_shape(num_blocks: int, block_size: int, num_kv_heads: int,
                           head_size: int) -> tuple[int, ...]:
        # The kit's logical layout, not vLLM's: vLLM's backends no longer declare a
        # shape (it comes from the KV-cache spec and layout), and CPU_ATTN's real one
        # is packed per ISA; the kit's kv_cache rules need slots they can inspect, so
        # the impl converts to vLLM's cache and back around every forward.
        return (2, num_blocks, block_size, num_kv_heads, head_size)

    @classmethod
    def validate_configuration(cls, config: AttentionSelectorConfig) -> list[str]:
        """vLLM's own reasons, for a decoder layer without MLA, sinks, sparsity,
        multimodal prefix or per-head scales (what the kit's config describes).
        vLLM's selector has no soft-cap field, so a soft cap is never a reason here:
        vLLM does not say whether its backends apply one."""
        from vllm.platforms import current_platform
        from vllm.v1.attention.backend import AttentionType

        return cls.vllm_backend.validate_configuration(
            head_size=config.head_size, dtype=config.dtype, kv_cache_dtype=config.kv_cache_dtype,
            block_size=config.block_size, use_mla=False, has_sink=False, use_sparse=False,
            use_mm_prefix=False, use_per_head_quant_scales=False,
            device_capability=current_platform.get_device_capability(),
            attn_type=AttentionType.DECODER, has_sliding_window=config.sliding_window is not None)


class VllmBridgedImpl(AttentionImpl):
    """One vLLM ``Attention`` layer per (dtype, block size) the impl is called with,
    kept across calls as vLLM's model keeps its layers across steps."""

    vllm_backend: ClassVar[type]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._layers: dict[tuple[torch.dtype, int], _VllmLayer] = {}

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                kv_cache: torch.Tensor, metadata: AttentionMetadata,
                output: torch.Tensor) -> torch.Tensor:
        num_blocks, block_size = kv_cache.shape[1], kv_cache.shape[2]
        layer = self._layers.get((query.dtype, block_size))
        if layer is None:
            layer = self._layers[query.dtype, block_size] = _VllmLayer.build(
                self, query.dtype, block_size, query.device)
        vllm_cache = layer.to_vllm_cache(kv_cache)
        impl = layer.attention.impl
        impl.do_kv_cache_update(layer.attention, key, value, vllm_cache, metadata.slot_mapping)
        returned = impl.forward(layer.attention, query, key, value, vllm_cache,
                                layer.metadata(metadata), output)
        layer.to_kit_cache(vllm_cache, kv_cache, num_blocks)
        return returned


@dataclasses.dataclass
class _VllmLayer:
    """vLLM's layer, its cache spec and metadata builder, and the inverse of its
    cache writer."""

    attention: torch.nn.Module
    spec: object
    builder: object
    #: Gathers one block's logical elements from vLLM's block (derived once built).
    unpacking: torch.Tensor = dataclasses.field(init=False)

    @classmethod
    def build(cls, kit_impl: VllmBridgedImpl, dtype: torch.dtype, block_size: int,
              device: torch.device) -> _VllmLayer:
        from vllm.config import set_current_vllm_config
        from vllm.model_executor.layers.attention import Attention
        from vllm.utils.torch_utils import set_default_torch_dtype

        backend = kit_impl.vllm_backend
        _check_layout(backend)
        vllm_config, changes = _vllm_config(dtype, block_size, kit_impl.kv_cache_dtype)
        refuse_changed(plugin_label(), changes, _BATCH_FIELDS,
                       f"an attention batch in {str(dtype).removeprefix('torch.')} with blocks of "
                       f"{block_size} and KV-cache dtype {kit_impl.kv_cache_dtype!r}")
        name = LAYER_NAME.format(next(_layer_numbers))
        # vLLM's model loader builds layers under the model's dtype, which the layer
        # takes as its activation dtype.
        with set_current_vllm_config(vllm_config), set_default_torch_dtype(dtype):
            attention = Attention(
                kit_impl.num_heads, kit_impl.head_size, kit_impl.scale, kit_impl.num_kv_heads,
                cache_config=vllm_config.cache_config, logits_soft_cap=kit_impl.logits_soft_cap,
                per_layer_sliding_window=kit_impl.sliding_window, prefix=name, attn_backend=backend)
            spec = attention.get_kv_cache_spec(vllm_config)
            # The builder also picks the layer's kernel variant (CPU_ATTN sets layer.isa).
            builder = backend.get_builder_cls()(spec, [name], vllm_config, device)
        if getattr(attention, "isa", None) == "amx":
            _request_amx_tiles()
        if spec.block_size != block_size:  # vLLM's own choice: the hook left it as asked
            raise BridgeLimitation(
                f"vLLM's {_qualname(backend)} chooses blocks of {spec.block_size} tokens for "
                f"this layer where the kit's batch has {block_size}; the bridge drives the "
                "batch's block size only (the kit's limit, not the plugin's failure)")
        layer = cls(attention, spec, builder)
        layer.unpacking = _unpacking(layer, dtype, block_size, kit_impl.num_kv_heads,
                                     kit_impl.head_size)
        return layer

    def new_vllm_cache(self, num_blocks: int) -> torch.Tensor:
        """One layer's cache as vLLM's allocator sizes it (``[B, H, N, C]`` in bytes,
        viewed as the spec's dtype; one layer of the LBHNC layout is contiguous)."""
        from vllm.v1.kv_cache_interface import compute_layer_kv_cache_shape_bytes

        *outer, content_bytes = compute_layer_kv_cache_shape_bytes(self.spec, num_blocks)
        return torch.empty(*outer, content_bytes // self.spec.dtype.itemsize, dtype=self.spec.dtype)

    def write_all_slots(self, kit_cache: torch.Tensor, vllm_cache: torch.Tensor) -> None:
        """vLLM's writer puts every slot of ``kit_cache`` into ``vllm_cache``."""
        _, num_blocks, block_size, num_kv_heads, head_size = kit_cache.shape
        keys, values = (kit_cache[i].reshape(-1, num_kv_heads, head_size) for i in (0, 1))
        slots = torch.arange(num_blocks * block_size, dtype=torch.long, device=kit_cache.device)
        self.attention.impl.do_kv_cache_update(self.attention, keys, values, vllm_cache, slots)

    def to_vllm_cache(self, kit_cache: torch.Tensor) -> torch.Tensor:
        vllm_cache = self.new_vllm_cache(kit_cache.shape[1])
        self.write_all_slots(kit_cache, vllm_cache)
        return vllm_cache

    def to_kit_cache(self, vllm_cache: torch.Tensor, kit_cache: torch.Tensor, num_blocks: int) -> None:
        """Copy ``vllm_cache`` back into ``kit_cache``, in place, block by block."""
        blocks = vllm_cache.reshape(num_blocks, -1)[:, self.unpacking]
        kit_cache.transpose(0, 1).copy_(blocks.view(kit_cache.transpose(0, 1).shape))

    def metadata(self, kit: AttentionMetadata):
        """The backend's metadata, built by its own builder as vLLM's runner does."""
        from vllm.v1.attention.backend import CommonAttentionMetadata

        common = CommonAttentionMetadata(
            query_start_loc=kit.query_start_loc, query_start_loc_cpu=kit.query_start_loc.cpu(),
            seq_lens=kit.seq_lens, num_reqs=kit.num_reqs, num_actual_tokens=kit.num_actual_tokens,
            max_query_len=kit.max_query_len, max_seq_len=kit.max_seq_len,
            block_table_tensor=kit.block_table, slot_mapping=kit.slot_mapping, causal=True)
        return self.builder.build(0, common)


#: Inverse of vLLM's cache writer, by (backend, dtype, block size, KV heads, head size,
#: kernel variant): what CPU_ATTN's packing depends on.
_UNPACKINGS: dict[tuple, torch.Tensor] = {}


def _unpacking(layer: _VllmLayer, dtype: torch.dtype, block_size: int, num_kv_heads: int,
               head_size: int) -> torch.Tensor:
    # CPU_ATTN's builder sets the kernel variant on the layer; other backends have none.
    # By class, not name: a vendor's subclass keeping the stock name may pack otherwise.
    key = (layer.attention.attn_backend, dtype, block_size, num_kv_heads, head_size,
           getattr(layer.attention, "isa", None))
    if key not in _UNPACKINGS:
        # One block: vLLM addresses block b at b times the page size (KVCacheTensor),
        # so what the writer does inside a page is the whole of its packing.
        _UNPACKINGS[key] = derive_unpacking(
            layer.write_all_slots, (2, 1, block_size, num_kv_heads, head_size),
            tuple(layer.new_vllm_cache(1).shape), dtype)
    return _UNPACKINGS[key]


class VllmAmxPermissionWarning(UserWarning):
    """The bridge asked Linux for AMX tile state on CPU_ATTN's behalf."""


@functools.cache
def _request_amx_tiles() -> None:
    """Request the process's AMX tile state (``arch_prctl(ARCH_REQ_XCOMP_PERM)``), as
    the oneDNN GEMMs of a vLLM model do before its first attention layer runs.
    CPU_ATTN's ``amx`` kernel uses the tiles without requesting them, so in a process
    that has run no such GEMM it dies with SIGILL (vLLM 0.32: an attention-only forward
    in bfloat16 on an AMX host); the bridge requests them once and says so."""
    if not torch._C._cpu._init_amx():
        raise BridgeLimitation("Linux refused AMX tile state to this process, which vLLM's "
                               "'amx' attention kernel needs")
    warnings.warn(VllmAmxPermissionWarning(
        "vLLM's CPU_ATTN 'amx' kernel uses AMX tiles without requesting them from Linux "
        "(SIGILL in a process that has run no oneDNN GEMM); the bridge requested them, as "
        "the GEMMs before every attention layer of a vLLM model do"), stacklevel=2)


def _check_layout(backend: type) -> None:
    from vllm.v1.kv_cache_layout import KVCacheLayout

    layouts = backend.supported_kv_cache_layouts()
    if layouts is not None and KVCacheLayout.LBHNC not in layouts:
        raise BridgeLimitation(
            f"vLLM's {_qualname(backend)} reads only the KV-cache layouts "
            f"{[layout.name for layout in layouts]}; the bridge allocates LBHNC caches only "
            "(the kit's limit, not the plugin's failure)")


#: The config fields an attention batch needs as the kit asked for them.
_BATCH_FIELDS = ("model_config.dtype", "cache_config.block_size", "cache_config.cache_dtype")


@functools.cache
def _vllm_config(dtype: torch.dtype, block_size: int, kv_cache_dtype: str):
    """The ``VllmConfig`` of a model of ``dtype`` with blocks of ``block_size``, shared
    by the layers built for it (each registers under its own name), and what the
    plugin's hook changed in it. The environment the hook rewrites is put back, as the
    kit's later tests must not see it changed."""
    with restored_environment():
        return build_vllm_config(MODEL, str(dtype).removeprefix("torch."), block_size, kv_cache_dtype)


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


#: Stands for the dots of a backend's qualified name in the kit's name for it (a
#: pkgutil name is dotted identifiers, and the dots after the colon are attributes).
_DOT = "__"


def bridged_name(qualname: str) -> str:
    """The kit's qualified name of the kit backend around vLLM's backend ``qualname``."""
    name = qualname.replace(".", _DOT)
    if name.replace(_DOT, ".") != qualname:
        raise BridgeLimitation(
            f"the bridge cannot name vLLM backend {qualname!r} (its name holds '_' beside a "
            "'.' or '__'; the kit's limit, not the plugin's failure)")
    return f"{__name__}:{name}"


def vllm_backend_class(qualname: str) -> type:
    """vLLM's backend class ``qualname``, imported as vLLM's selector imports it."""
    from vllm.v1.attention.backend import AttentionBackend as VllmAttentionBackend

    return named_class(qualname, VllmAttentionBackend,
                       f"vLLM platform plugin {plugin_label()}: get_attn_backend_cls names")


@functools.cache
def _bridged(name: str) -> type[VllmBridgedBackend]:
    vllm_backend = vllm_backend_class(name.replace(_DOT, "."))
    described = _qualname(vllm_backend)
    impl = type(f"{name}Impl", (VllmBridgedImpl,), {
        "__module__": __name__, "__qualname__": f"{name}.impl_cls", "vllm_backend": vllm_backend,
        "__doc__": f"vLLM's {_qualname(vllm_backend.get_impl_cls())}, under the kit's contract."})
    return type(name, (VllmBridgedBackend,), {
        "__module__": __name__, "__qualname__": name, "vllm_backend": vllm_backend,
        "impl_cls": impl, "__doc__": f"vLLM's {described}, under the kit's contract."})


def __getattr__(name: str) -> type[VllmBridgedBackend]:
    if name.startswith("__"):
        raise AttributeError(name)
    return _bridged(name)
