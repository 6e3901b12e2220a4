"""Executors: run a method on every worker (``collective_rpc``), in this process or in
one spawned process per rank. The engine talks to workers only through them."""

from __future__ import annotations

import abc
import multiprocessing
import socket
import traceback
from collections.abc import Callable
from typing import Any

from conformance.reference_engine.config import EngineConfig
from conformance.reference_engine.engine.step import ModelRunnerOutput, SchedulerOutput
from conformance.reference_engine.platform_selection import PlatformSpec, select_platform
from conformance.reference_engine.platforms.discovery import import_qualname
from conformance.reference_engine.worker.worker_base import WorkerBase

Method = str | Callable[..., Any]


def _call(worker: WorkerBase, method: Method, args: tuple, kwargs: dict) -> Any:
    """A string names a worker method; a callable receives the worker first."""
    if isinstance(method, str):
        return getattr(worker, method)(*args, **kwargs)
    return method(worker, *args, **kwargs)


def _make_worker(config: EngineConfig, rank: int, init_method: str | None, platform: PlatformSpec):
    worker_cls = import_qualname(select_platform(platform).get_worker_cls())
    return worker_cls(config, local_rank=rank, rank=rank, distributed_init_method=init_method)


class Executor(abc.ABC):
    """Builds the workers (``init_device``, then ``load_model``) and relays calls."""

    @abc.abstractmethod
    def collective_rpc(self, method: Method, args: tuple = (), kwargs: dict | None = None) -> list:
        """``method`` on every worker, in rank order; its results as a list."""

    def execute_model(self, scheduler_output: SchedulerOutput) -> ModelRunnerOutput:
        return self.collective_rpc("execute_model", (scheduler_output,))[0]

    def shutdown(self) -> None:
        self.collective_rpc("shutdown")


class UniProcExecutor(Executor):
    """One worker in this process (world size 1)."""

    def __init__(self, config: EngineConfig, platform: PlatformSpec) -> None:
        self.driver_worker = _make_worker(config, 0, None, platform)
        self.collective_rpc("init_device")
        self.collective_rpc("load_model")

    def collective_rpc(self, method, args=(), kwargs=None) -> list:
        return [_call(self.driver_worker, method, args, kwargs or {})]


class MultiprocExecutor(Executor):
    """One spawned process per rank, each running a worker; calls go down a pipe.

    Spawned, never forked: a forked child would inherit device state (a CUDA
    context, a driver handle) that plugins cannot use twice.
    """

    def __init__(self, config: EngineConfig, platform: PlatformSpec) -> None:
        ctx = multiprocessing.get_context("spawn")
        init_method = f"tcp://127.0.0.1:{_free_port()}"
        self.conns, self.processes = [], []
        for rank in range(config.tensor_parallel_size):
            parent, child = ctx.Pipe()
            process = ctx.Process(
                target=_worker_loop, args=(config, rank, init_method, platform, child), daemon=True
            )
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)
        self.collective_rpc("init_device")
        self.collective_rpc("load_model")

    def collective_rpc(self, method, args=(), kwargs=None) -> list:
        for conn in self.conns:
            conn.send((method, args, kwargs or {}))
        replies = []
        for rank, conn in enumerate(self.conns):
            try:
                replies.append(conn.recv())
            except EOFError:
                raise RuntimeError(f"worker rank {rank} died during {method!r}") from None
        for rank, (ok, value) in enumerate(replies):
            if not ok:
                raise RuntimeError(f"worker rank {rank} failed in {method!r}: {value}")
        return [value for _, value in replies]

    def shutdown(self) -> None:
        try:
            super().shutdown()
        finally:
            for conn in self.conns:
                try:
                    conn.send(None)
                except OSError:
                    pass  # that worker is gone already
            for process in self.processes:
                process.join(timeout=10)
                if process.is_alive():
                    process.kill()


def _worker_loop(config, rank, init_method, platform, conn) -> None:
    """A rank's process: build the worker, then answer calls until told to stop.
    An exception is sent back as the reply (the loop continues, as vLLM's does)."""
    try:
        worker = _make_worker(config, rank, init_method, platform)
    except Exception as exc:
        worker, startup_error = None, exc
    while (message := conn.recv()) is not None:
        try:
            if worker is None:
                raise startup_error
            conn.send((True, _call(worker, *message)))
        except Exception as exc:
            conn.send((False, "".join(traceback.format_exception_only(exc)).strip()))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
