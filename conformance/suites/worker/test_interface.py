"""Worker suite, interface: what the executor calls exists on the plugin's worker."""

from __future__ import annotations

import inspect
import pkgutil

import pytest

from conformance.contract.worker import WorkerBase
from conformance.suites.worker.driving import EXECUTOR_CALLS


@pytest.mark.contract("worker.rpc.methods")
def test_executor_methods_exist(platform):
    """Resolves ``get_worker_cls()``, binds the executor's constructor keywords to its
    signature, and checks each method of ``driving.EXECUTOR_CALLS`` is present, not
    abstract, and binds the executor's arguments."""
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
