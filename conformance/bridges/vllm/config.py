"""``check_and_update_config`` of a vLLM platform, run in a child process.

vLLM calls the hook while it builds a ``VllmConfig``, and CPU's version rewrites the
calling process's environment (``LD_PRELOAD``, ``VLLM_WORKER_MULTIPROC_METHOD``, ...),
which would leak into every later test. So the bridge builds the ``VllmConfig`` the
kit's ``EngineConfig`` describes in one long-lived spawned child, the way vLLM's engine
does (its ``__post_init__`` runs the hook), brings back what the hook made of the
config, puts the child's environment back after each call, and reports what changed
as a ``VllmEnvironmentWarning``. What the hook changed of the kit's request is carried
into the kit's config and reported as the plugin's change (``config_changes``), a
``VllmConfigChangeWarning``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import torch

from conformance.bridges.vllm.child_process import ChildCallTimeout, ChildProcess
from conformance.bridges.vllm.config_changes import recording_hook
from conformance.reference_engine.distributed import startup
from conformance.reference_engine.models.config import get_model_config, to_hf_config
from conformance.results.outcomes import TimedOut


class VllmEnvironmentWarning(UserWarning):
    """vLLM's config hook changed the process environment (seen in the child)."""


class ConfigProcessStartTimedOut(TimedOut):
    """The config process did not import vLLM within the start-up allowance
    (``--startup-timeout``)."""


@functools.cache
def _child(platform_name: str) -> ChildProcess:
    """The config process, once it has imported vLLM with ``platform_name`` current:
    that import is start-up, bounded by ``--startup-timeout``, not by the deadline of
    the test that first needs it."""
    child = ChildProcess("vllm-config")
    with startup.starting_processes() as allowance_s:
        try:
            child.call(_start_config_process, platform_name, timeout=allowance_s)
        except ChildCallTimeout:
            child.kill()
            raise ConfigProcessStartTimedOut(startup.timed_out_message(
                "vLLM's config process", allowance_s) + "; its process was killed") from None
        except BaseException:
            child.kill()
            raise
    return child


def _start_config_process(platform_name: str) -> None:
    from conformance.bridges.vllm import bridged

    # The plugin's platform first: importing vllm.config reads vLLM's current_platform,
    # which vLLM would otherwise resolve itself, and refuse where several vendors'
    # plugins are installed ("Only one platform plugin can be activated").
    getattr(bridged, platform_name)
    import vllm.config  # noqa: F401  (the import is the start-up being bounded)


class VllmConfigChangeWarning(UserWarning):
    """vLLM's platform plugin changed the kit's request in its config hook (the
    change is carried into the kit's config, and the plugin's)."""


def check_and_update_in_child(platform_name: str, config) -> None:
    """Let vLLM's platform ``platform_name`` (a ``vllm:`` plugin name without the
    prefix) check ``config`` (the kit's ``EngineConfig``): a refusal raises
    ``ValueError`` with vLLM's message; else ``config``'s fields take their values in
    the ``VllmConfig`` vLLM made of it, and the hook's changes among them are reported
    as the plugin's."""
    request = {"model": config.model, "dtype": str(config.dtype).removeprefix("torch."),
               "kv_cache_dtype": config.kv_cache_dtype, "block_size": config.block_size,
               "tensor_parallel_size": config.tensor_parallel_size,
               "quantization": config.quantization, "max_model_len": config.max_model_len}
    try:
        answer = _child(platform_name).call(_build_in_child, platform_name, request)
    except BaseException:
        _child.cache_clear()  # killed: the next call starts another
        raise
    if answer["environment"]:
        changes = ", ".join(f"{k}={v!r}" for k, v in sorted(answer["environment"].items()))
        warnings.warn(VllmEnvironmentWarning(
            f"vLLM's check_and_update_config changed the process environment: {changes}"),
            stacklevel=3)
    if "refusal" in answer:
        if answer["refusal_is_value_error"]:
            raise ValueError(answer["refusal"])
        raise RuntimeError(f"vLLM refused with an error other than ValueError: {answer['refusal']}")
    if answer["changed"]:
        warnings.warn(VllmConfigChangeWarning(
            f"vLLM platform plugin 'vllm:{platform_name}' changed the kit's request in "
            f"check_and_update_config: {', '.join(answer['changed'])}"), stacklevel=3)
    config.dtype = getattr(torch, answer["dtype"])
    config.kv_cache_dtype = answer["kv_cache_dtype"]
    config.block_size = answer["block_size"]
    config.tensor_parallel_size = answer["tensor_parallel_size"]
    config.quantization = answer["quantization"]
    config.max_model_len = answer["max_model_len"]


def write_model_config(model: str, folder: Path) -> str:
    """``folder`` (made if needed), holding the kit model's ``config.json`` as vLLM's
    ``ModelConfig`` and transformers read it."""
    folder.mkdir(parents=True, exist_ok=True)
    # transformers finds the config class by model_type, which the kit's export leaves out.
    hf_config = {"model_type": "llama", **to_hf_config(get_model_config(model))}
    (folder / "config.json").write_text(json.dumps(hf_config))
    return str(folder)


def folder_removed_at_exit(prefix: str) -> Path:
    """A new temporary folder, removed (with what it holds) when the process exits."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@functools.cache
def model_config_folder(model: str) -> str:
    """A folder holding only the kit model's ``config.json`` (what ``ModelConfig``
    reads: the weights are never loaded through it), made once per process."""
    return write_model_config(model, folder_removed_at_exit(f"conformance-vllm-{model}-config-"))


@contextlib.contextmanager
def restored_environment():
    """Undo what the block does to ``os.environ`` (vLLM's config hook rewrites it);
    the dict yielded then holds each variable it changed (None: removed)."""
    before = dict(os.environ)
    changed: dict[str, str | None] = {}
    try:
        yield changed
    finally:
        changed.update({k: v for k, v in os.environ.items() if before.get(k) != v})
        changed.update({k: None for k in before.keys() - os.environ.keys()})
        os.environ.clear()
        os.environ.update(before)


def build_vllm_config(model: str, dtype: str, block_size: int, kv_cache_dtype: str = "auto",
                      tensor_parallel_size: int = 1, quantization: str | None = None,
                      max_model_len: int | None = None):
    """The ``VllmConfig`` of the kit's request, built as vLLM's engine builds it (its
    ``__post_init__`` runs the current platform's hook), with what the hook changed.
    The hook may rewrite the environment: call it within ``restored_environment``."""
    from vllm.config import CacheConfig, ModelConfig, ParallelConfig, VllmConfig
    from vllm.platforms import current_platform

    with recording_hook(current_platform) as calls:
        model_config = ModelConfig(model=model_config_folder(model), dtype=dtype,
                                   quantization=quantization, max_model_len=max_model_len,
                                   skip_tokenizer_init=True)
        vllm_config = VllmConfig(
            model_config=model_config,
            cache_config=CacheConfig(block_size=block_size, cache_dtype=kv_cache_dtype),
            parallel_config=ParallelConfig(tensor_parallel_size=tensor_parallel_size))
    return vllm_config, [change for call in calls for change in call]


def _build_in_child(platform_name: str, request: dict) -> dict:
    """In the child: build the ``VllmConfig``; what it became, what the plugin's hook
    changed of the kit's request, and the environment changes, which are undone."""
    from conformance.bridges.vllm import bridged

    getattr(bridged, platform_name)  # makes vLLM's platform current in this process
    answer: dict = {}
    with restored_environment() as changed:
        try:
            vllm_config, changes = build_vllm_config(**request)
        except Exception as exc:
            answer["refusal"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            answer["refusal_is_value_error"] = isinstance(exc, ValueError)
        else:
            model, cache, parallel = (vllm_config.model_config, vllm_config.cache_config,
                                      vllm_config.parallel_config)
            answer.update(
                dtype=str(model.dtype).removeprefix("torch."), kv_cache_dtype=cache.cache_dtype,
                block_size=cache.block_size, tensor_parallel_size=parallel.tensor_parallel_size,
                quantization=model.quantization, max_model_len=model.max_model_len,
                changed=[str(change) for change in changes if change.requested])
    answer["environment"] = changed
    return answer
