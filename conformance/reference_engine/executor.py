"""Executors: run a method on every worker (``collective_rpc``), in this process or in
one spawned process per rank. The engine talks to workers only through them."""

from __future__ import annotations

import abc
import pkgutil
from collections.abc import Callable
from typing import Any

from conformance.contract.config import EngineConfig
from conformance.contract.worker import ModelRunnerOutput, SchedulerOutput, WorkerBase
from conformance.reference_engine.distributed.rank_processes import RankProcesses, call_on

Method = str | Callable[..., Any]


def make_worker(rank: int, world_size: int, init_method: str | None,
                config: EngineConfig) -> WorkerBase:
    """The platform's worker for ``rank`` (``world_size`` is the config's)."""
    worker_cls = pkgutil.resolve_name(config.platform.get_worker_cls())
    return worker_cls(config, local_rank=rank, rank=rank, distributed_init_method=init_method)


class Executor(abc.ABC):
    """Builds the workers (``init_device``, then ``load_model``) and relays calls."""

    @abc.abstractmethod
    def collective_rpc(self, method: Method, args: tuple = (), kwargs: dict | None = None) -> list:
        """``method`` on every worker, in rank order; its results as a list. A string
        names a worker method; a callable receives the worker first."""

    def execute_model(self, scheduler_output: SchedulerOutput) -> ModelRunnerOutput:
        return self.collective_rpc("execute_model", (scheduler_output,))[0]

    def shutdown(self) -> None:
        self.collective_rpc("shutdown")


class UniProcExecutor(Executor):
    """One worker in this process (world size 1)."""

    def __init__(self, config: EngineConfig) -> None:
        self.driver_worker = make_worker(0, 1, None, config)
        self.collective_rpc("init_device")
        self.collective_rpc("load_model")

    def collective_rpc(self, method, args=(), kwargs=None) -> list:
        return [call_on(self.driver_worker, method, args, kwargs or {})]


class MultiprocExecutor(Executor):
    """One spawned process per rank, each running a worker; a worker that raises
    raises ``RankError`` here (with its traceback) and keeps serving, as vLLM's do.

    Spawned, never forked: a forked child would inherit device state (a CUDA
    context, a driver handle) that plugins cannot use twice.
    """

    def __init__(self, config: EngineConfig) -> None:
        self.ranks = RankProcesses(config.tensor_parallel_size, make_worker, (config,),
                                   name="conformance-worker")
        try:
            self.ranks.start()
            self.collective_rpc("init_device")
            self.collective_rpc("load_model")
        except BaseException:
            self.ranks.kill()
            raise

    def collective_rpc(self, method, args=(), kwargs=None) -> list:
        return self.ranks.call(method, *args, **(kwargs or {}))

    def shutdown(self) -> None:
        try:
            super().shutdown()
        finally:
            self.ranks.close(grace_s=10)
