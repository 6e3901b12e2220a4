"""Engine configuration: the one object platforms see in their config hooks."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from conformance.contract.platform import Platform


@dataclasses.dataclass
class EngineConfig:
    """Settings of one engine instance, as ``LLM(...)`` receives them.

    Mutable on purpose: ``Platform.check_and_update_config`` may adjust it in place
    before anything is built (as vLLM's ``VllmConfig`` is), and nothing reads it
    earlier.
    """

    model: str = "tiny"
    architecture: str = "LlamaForCausalLM"
    dtype: torch.dtype = torch.float32
    kv_cache_dtype: str = "auto"
    quantization: str | None = None
    tensor_parallel_size: int = 1
    block_size: int = 16
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 2048
    max_model_len: int = 2048
    memory_fraction: float = 0.9
    seed: int = 0
    #: Qualified name of the ``AttentionBackend`` class, filled in by the engine from
    #: ``Platform.get_attn_backend_cls`` after ``check_and_update_config``.
    attention_backend: str | None = None
    #: KV-cache blocks to allocate; None sizes the cache from available memory (a
    #: small number forces preemption, which tests use).
    num_kv_blocks: int | None = None
    #: ``"uni"`` (the worker in this process) or ``"mp"`` (one spawned process per
    #: rank); None picks ``"uni"`` for one rank and ``"mp"`` for more.
    distributed_executor_backend: str | None = None
    #: The ``Platform`` class this engine runs on, set by ``LLM`` before the config
    #: hooks run; every part of the engine finds its platform here. Classes pickle by
    #: qualified name, so a platform given to a multi-process engine must be
    #: importable by it.
    platform: type[Platform] | None = None
