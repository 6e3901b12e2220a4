"""Platform suite, factories: the qualified names the engine imports and builds."""

from __future__ import annotations

import inspect
import pkgutil

import pytest
import torch

from conformance.contract.attention import AttentionBackend, AttentionSelectorConfig
from conformance.contract.communicator import DeviceCommunicatorBase
from conformance.contract.worker import WorkerBase
from conformance.suites.undeclared import undeclared_block_sizes, undeclared_head_sizes


def _concrete_subclass(qualname: str, base: type) -> type:
    assert isinstance(qualname, str), f"factory returned {qualname!r}, not a str"
    cls = pkgutil.resolve_name(qualname)
    assert isinstance(cls, type) and issubclass(cls, base), (
        f"{qualname} is not a subclass of {base.__name__}"
    )
    assert not inspect.isabstract(cls), f"{qualname} leaves abstract methods unimplemented"
    return cls


def _declared_attention_configs(capabilities):
    """One config per declared head size, dtype and block size (not the product:
    the Attention suite covers combinations)."""
    dtype, block_size = capabilities.dtypes[0], capabilities.block_sizes[0]
    configs = [AttentionSelectorConfig(h, dtype, block_size) for h in capabilities.head_sizes]
    configs += [AttentionSelectorConfig(capabilities.head_sizes[0], d, block_size)
                for d in capabilities.dtypes[1:]]
    configs += [AttentionSelectorConfig(capabilities.head_sizes[0], dtype, b)
                for b in capabilities.block_sizes[1:]]
    return configs


@pytest.mark.contract("platform.factories.attention_backend")
def test_attention_backend_accepts_declared_configs(platform, capabilities):
    """One config per declared head size, dtype and block size (the rest at the first
    declared); each named class is resolved, checked to be a concrete
    ``AttentionBackend`` subclass, and asked ``validate_configuration``."""
    for config in _declared_attention_configs(capabilities):
        backend = _concrete_subclass(platform.get_attn_backend_cls(config), AttentionBackend)
        reasons = backend.validate_configuration(config)
        assert reasons == [], f"{backend.__name__} refuses declared {config}: {reasons}"


@pytest.mark.contract("platform.factories.attention_refusal")
def test_attention_backend_refuses_undeclared_configs(platform, capabilities):
    """Asks ``get_attn_backend_cls`` for undeclared head sizes and block sizes above,
    below and between the declared ones (``suites/undeclared.py``), and each of fp32,
    bf16 and fp16 left undeclared, expecting ``ValueError`` for each."""
    head, dtype, block = capabilities.head_sizes[0], capabilities.dtypes[0], capabilities.block_sizes[0]
    undeclared = [AttentionSelectorConfig(size, dtype, block) for size in undeclared_head_sizes(capabilities.head_sizes)]
    undeclared += [AttentionSelectorConfig(head, dtype, size) for size in undeclared_block_sizes(capabilities.block_sizes)]
    undeclared += [AttentionSelectorConfig(head, d, block)
                   for d in (torch.float32, torch.bfloat16, torch.float16)
                   if d not in capabilities.dtypes]
    for config in undeclared:
        with pytest.raises(ValueError):
            platform.get_attn_backend_cls(config)


@pytest.mark.contract("platform.factories.worker")
def test_worker_class_resolves(platform):
    """Resolves the name ``get_worker_cls()`` returns with ``pkgutil.resolve_name``;
    checks it is a str, the class subclasses ``WorkerBase`` and ``inspect.isabstract``
    is False."""
    _concrete_subclass(platform.get_worker_cls(), WorkerBase)


@pytest.mark.contract("platform.factories.communicator")
def test_communicator_class_resolves(platform):
    """Resolves the name ``get_device_communicator_cls()`` returns with
    ``pkgutil.resolve_name``; checks it is a str, the class subclasses
    ``DeviceCommunicatorBase`` and is not abstract."""
    _concrete_subclass(platform.get_device_communicator_cls(), DeviceCommunicatorBase)
