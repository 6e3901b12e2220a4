"""The generic ``Worker``: every device access goes through the platform in its config,
so a platform plugin gets a working worker without writing one."""

from __future__ import annotations

import pkgutil

import torch
import torch.distributed as dist

from conformance.contract.config import EngineConfig
from conformance.contract.worker import ModelRunnerOutput, SchedulerOutput, WorkerBase
from conformance.reference_engine.layers.parallel import TensorParallel
from conformance.reference_engine.worker.model_runner import ModelRunner


class Worker(WorkerBase):
    def __init__(self, config: EngineConfig, local_rank: int = 0, rank: int = 0,
                 distributed_init_method: str | None = None) -> None:
        super().__init__(config, local_rank, rank, distributed_init_method)
        self.platform = config.platform
        self.device: torch.device | None = None
        self.model_runner: ModelRunner | None = None
        self.tp = TensorParallel()
        self._available_memory: int | None = None

    def init_device(self) -> None:
        # Ranks share devices round-robin, so a one-device platform can still run TP;
        # ranks sharing one device split the host threads instead of fighting over them.
        ranks_per_device = -(-self.config.tensor_parallel_size // self.platform.device_count())
        torch.set_num_threads(max(1, torch.get_num_threads() // ranks_per_device))
        index = self.local_rank % self.platform.device_count()
        self.device = torch.device(self.platform.device_type, index)
        self.platform.set_device(self.device)
        world_size = self.config.tensor_parallel_size
        communicator = None
        if world_size > 1:
            dist.init_process_group(
                self.platform.dist_backend,
                init_method=self.distributed_init_method,
                rank=self.rank,
                world_size=world_size,
            )
            communicator = pkgutil.resolve_name(self.platform.get_device_communicator_cls())(self.device)
        self.tp = TensorParallel(self.rank, world_size, communicator)
        self.platform.seed_everything(self.config.seed)

    def load_model(self) -> None:
        self.model_runner = ModelRunner(self.config, self.device, self.tp)

    def determine_available_memory(self) -> int:
        """``memory_fraction`` of the device, less what is already in use (weights,
        other processes) and a reserve for one full step's activations. Measured once,
        so every call agrees."""
        if self._available_memory is None:
            free, total = self.platform.mem_get_info(self.device.index or 0)
            budget = self.config.memory_fraction * total - (total - free) - self._activation_reserve()
            self._available_memory = max(0, int(budget))
        return self._available_memory

    def _activation_reserve(self) -> int:
        m = self.model_runner.model_config
        per_token = 4 * m.hidden_size + 3 * m.intermediate_size // self.config.tensor_parallel_size
        logits = self.config.max_num_seqs * m.vocab_size * 4  # fp32 logits of one step
        return self.config.max_num_batched_tokens * per_token * self.config.dtype.itemsize + logits

    def initialize_cache(self, num_blocks: int) -> None:
        self.model_runner.initialize_cache(num_blocks)

    def execute_model(self, scheduler_output: SchedulerOutput) -> ModelRunnerOutput:
        with self.platform.inference_mode():
            return self.model_runner.execute_model(scheduler_output)

    def shutdown(self) -> None:
        if self.model_runner is not None:
            self.model_runner.release()
            self.model_runner = None
        if dist.is_initialized():
            dist.destroy_process_group()
        self.platform.empty_cache()
