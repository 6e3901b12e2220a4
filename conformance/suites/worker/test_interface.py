"""Worker suite, interface: what the executor calls exists on the plugin's worker."""

from __future__ import annotations

import inspect
import pkgutil

import pytest

from conformance.contract.worker import WorkerBase
from conformance.suites.worker.driving import EXECUTOR_CALLS


@pytest.mark.contract("worker.rpc.methods")
def test_executor_methods_exist(platform):
    """Every method an executor calls through ``collective_rpc`` (init_device,
    load_model, determine_available_memory, initialize_cache, execute_model,
    check_health, shutdown) is a concrete method of the platform's worker class that
    accepts the arguments the executor passes, and the worker takes the executor's
    constructor arguments."""
    worker_cls = pkgutil.resolve_name(platform.get_worker_cls())
    assert isinstance(worker_cls, type) and issubclass(worker_cls, WorkerBase), worker_cls
    problems = []
    try:
        inspect.signature(worker_cls).bind(None, local_rank=0, rank=0, distributed_init_method=None)
    except TypeError as exc:
        problems.append(f"constructor: {exc}")
    for name, args in EXECUTOR_CALLS.items():
        method = getattr(worker_cls, name, None)
        if not callable(method):
            problems.append(f"{name}: missing")
        elif getattr(method, "__isabstractmethod__", False):
            problems.append(f"{name}: abstract, never implemented")
        else:
            try:
                inspect.signature(method).bind(None, *args)
            except TypeError as exc:
                problems.append(f"{name}{args}: {exc}")
    assert not problems, f"{worker_cls.__qualname__}: " + "; ".join(problems)
