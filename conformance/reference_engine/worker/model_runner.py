"""``ModelRunner``: turns a ``SchedulerOutput`` into tensors, runs the model, samples.

It reaches the device only through the ``torch.device`` its worker gives it, and the
platform's kernels only through the config's platform, so it runs unchanged on any
platform.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import pkgutil

import torch

from conformance.contract.attention import AttentionMetadata
from conformance.contract.config import EngineConfig
from conformance.contract.worker import ModelRunnerOutput, SchedulerOutput
from conformance.reference_engine.layers.custom_ops import CustomOps
from conformance.reference_engine.layers.parallel import TensorParallel
from conformance.reference_engine.models.config import ModelConfig, get_model_config
from conformance.reference_engine.models.llama import LlamaForCausalLM
from conformance.reference_engine.models.loader import load_weights, random_weights, safetensors_weights
from conformance.reference_engine.sampler import Sampler

KV_CACHE_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def kv_cache_dtype(config: EngineConfig) -> torch.dtype:
    return KV_CACHE_DTYPES.get(config.kv_cache_dtype, config.dtype)


def kv_cache_block_bytes(config: EngineConfig, model_config: ModelConfig, backend) -> int:
    """Bytes one KV-cache block takes over all layers of one tensor-parallel rank."""
    num_kv_heads = model_config.num_key_value_heads // config.tensor_parallel_size
    shape = backend.get_kv_cache_shape(1, config.block_size, num_kv_heads, model_config.head_size)
    layers = model_config.num_hidden_layers
    return math.prod(shape) * kv_cache_dtype(config).itemsize * layers


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype):
    # Parameters are created in the model dtype directly: no fp32 copy of a large model.
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


class ModelRunner:
    def __init__(self, config: EngineConfig, device: torch.device, tp: TensorParallel) -> None:
        self.config = config
        self.device = device
        self.model_config = get_model_config(config.model)
        self.backend = pkgutil.resolve_name(config.attention_backend)
        ops = CustomOps.of(config.platform)
        with _default_dtype(config.dtype), torch.device(device):
            self.model = LlamaForCausalLM(self.model_config, self.backend, tp, ops)
        folder = self.model_config.folder
        load_weights(
            self.model,
            safetensors_weights(folder) if folder else random_weights(self.model_config, config.seed),
        )
        self.kv_cache_dtype = kv_cache_dtype(config)
        self.sampler = Sampler(device, config.seed)

    def initialize_cache(self, num_blocks: int) -> None:
        for attn in self.model.attention_layers():
            shape = self.backend.get_kv_cache_shape(
                num_blocks, self.config.block_size, attn.num_kv_heads, attn.head_size
            )
            # Zeroed, not empty: the cache must never hold NaN a kernel could read.
            attn.kv_cache = torch.zeros(shape, dtype=self.kv_cache_dtype, device=self.device)

    def release(self) -> None:
        del self.model, self.sampler

    def prepare_inputs(self, so: SchedulerOutput):
        """Flat ``input_ids``, ``positions``, the attention metadata and the rows
        whose logits are sampled (each sampling request's last token)."""
        reqs = so.requests
        query_lens = torch.tensor([len(r.token_ids) for r in reqs])
        context_lens = torch.tensor([r.num_computed_tokens for r in reqs])
        query_start_loc = torch.zeros(len(reqs) + 1, dtype=torch.int32)
        torch.cumsum(query_lens, 0, out=query_start_loc[1:])
        token_req = torch.repeat_interleave(torch.arange(len(reqs)), query_lens)
        positions = torch.arange(int(query_lens.sum())) - query_start_loc[token_req] + context_lens[token_req]
        width = max(len(r.block_table) for r in reqs)
        block_table = torch.tensor([r.block_table + [-1] * (width - len(r.block_table)) for r in reqs], dtype=torch.int32)
        bs = self.config.block_size
        slot_mapping = block_table[token_req, positions // bs].long() * bs + positions % bs
        seq_lens = (context_lens + query_lens).int()
        sample_rows = [i for i, r in enumerate(reqs) if r.sample]
        input_ids = torch.tensor(list(itertools.chain.from_iterable(r.token_ids for r in reqs)))
        metadata = AttentionMetadata(
            query_start_loc=self._to_device(query_start_loc),
            seq_lens=self._to_device(seq_lens),
            block_table=self._to_device(block_table),
            slot_mapping=self._to_device(slot_mapping),
            max_query_len=int(query_lens.max()),
            max_seq_len=int(seq_lens.max()),
            num_actual_tokens=len(input_ids),
        )
        logits_indices = query_start_loc[1:].long()[sample_rows] - 1
        return self._to_device(input_ids), self._to_device(positions), metadata, self._to_device(logits_indices)

    def _to_device(self, t: torch.Tensor) -> torch.Tensor:
        return t.to(self.device, non_blocking=True)

    def zero_new_blocks(self, so: SchedulerOutput) -> None:
        """Zero, in every layer's cache, the blocks no computed token of their request
        lives in yet: a freed block comes back holding its last request's keys."""
        bs = self.config.block_size
        new = [b for r in so.requests for b in r.block_table[-(-r.num_computed_tokens // bs):]]
        if new:
            blocks = torch.tensor(new, device=self.device)
            for attn in self.model.attention_layers():
                attn.kv_cache[:, blocks] = 0

    def execute_model(self, so: SchedulerOutput) -> ModelRunnerOutput:
        if self.config.platform.capabilities.supports("zeroed_cache_blocks"):
            self.zero_new_blocks(so)
        input_ids, positions, metadata, logits_indices = self.prepare_inputs(so)
        hidden_states = self.model(input_ids, positions, metadata)
        sampling = [r for r in so.requests if r.sample]
        if not sampling:
            return ModelRunnerOutput([], [])
        logits = self.model.compute_logits(hidden_states[logits_indices])
        tokens, logprobs = self.sampler(logits, sampling)
        return ModelRunnerOutput([r.request_id for r in sampling], tokens, logprobs)
