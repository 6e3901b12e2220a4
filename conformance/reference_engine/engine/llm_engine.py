"""``LLMEngine``: requests in, one scheduled step at a time, finished sequences out."""

from __future__ import annotations

import math
import pkgutil

from conformance.contract.config import EngineConfig
from conformance.contract.sampling_params import SamplingParams
from conformance.reference_engine.engine.block_manager import BlockManager
from conformance.reference_engine.engine.scheduler import Scheduler
from conformance.reference_engine.engine.sequence import Sequence
from conformance.reference_engine.executor import MultiprocExecutor, UniProcExecutor
from conformance.reference_engine.models.config import ModelConfig
from conformance.reference_engine.worker.model_runner import kv_cache_block_bytes


class LLMEngine:
    def __init__(self, config: EngineConfig, model_config: ModelConfig,
                 eos_token_ids: frozenset[int]) -> None:
        self.config = config
        self.model_config = model_config
        backend = config.distributed_executor_backend or ("mp" if config.tensor_parallel_size > 1 else "uni")
        if backend not in ("uni", "mp"):
            raise ValueError(f"distributed_executor_backend must be 'uni' or 'mp', got {backend!r}")
        if backend == "uni" and config.tensor_parallel_size > 1:
            raise ValueError("the in-process executor runs one rank; use 'mp' for tensor_parallel_size > 1")
        self.executor = (MultiprocExecutor if backend == "mp" else UniProcExecutor)(config)
        try:
            num_blocks = self._num_kv_blocks()
            self.executor.collective_rpc("initialize_cache", (num_blocks,))
        except BaseException:
            self.executor.shutdown()
            raise
        self.scheduler = Scheduler(
            BlockManager(num_blocks, config.block_size),
            config.max_num_seqs,
            config.max_num_batched_tokens,
            config.max_model_len,
            eos_token_ids,
        )

    def _num_kv_blocks(self) -> int:
        """The configured count, else what every rank's memory allows, capped at what
        ``max_num_seqs`` full-length sequences could use."""
        config = self.config
        per_seq = math.ceil(config.max_model_len / config.block_size)
        if config.num_kv_blocks is not None:
            num_blocks = config.num_kv_blocks
        else:
            available = min(self.executor.collective_rpc("determine_available_memory"))
            block_bytes = kv_cache_block_bytes(config, self.model_config, pkgutil.resolve_name(config.attention_backend))
            num_blocks = min(available // block_bytes, config.max_num_seqs * per_seq)
        if num_blocks < per_seq:
            raise ValueError(
                f"a KV cache of {num_blocks} blocks cannot hold one sequence of max_model_len "
                f"{config.max_model_len} ({per_seq} blocks of {config.block_size}); "
                "lower max_model_len or give the cache more memory"
            )
        return num_blocks

    def check_request(self, prompt_token_ids: list[int], params: SamplingParams) -> None:
        """Raise ``ValueError`` naming what makes this request unservable."""
        params.verify()
        if not prompt_token_ids:
            raise ValueError("the prompt is empty")
        if len(prompt_token_ids) > self.config.max_model_len:
            raise ValueError(
                f"the prompt has {len(prompt_token_ids)} tokens, more than "
                f"max_model_len {self.config.max_model_len}"
            )
        vocab = self.model_config.vocab_size
        bad = [t for t in prompt_token_ids if not (isinstance(t, int) and 0 <= t < vocab)]
        if bad:
            raise ValueError(f"prompt token {bad[0]!r} is outside the vocabulary [0, {vocab})")

    def add_request(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams) -> None:
        """Queue a request; a bad one raises ``ValueError`` and leaves the others be."""
        try:
            self.check_request(prompt_token_ids, params)
        except ValueError as exc:
            raise ValueError(f"request {request_id}: {exc}") from None
        self.scheduler.add(Sequence(request_id, prompt_token_ids, params))

    def has_unfinished_requests(self) -> bool:
        return self.scheduler.has_unfinished()

    def step(self) -> list[Sequence]:
        """Run one step; return the sequences it finished."""
        scheduled, scheduler_output = self.scheduler.schedule()
        output = self.executor.execute_model(scheduler_output)
        return self.scheduler.update(scheduled, output)

    def shutdown(self) -> None:
        self.executor.shutdown()
