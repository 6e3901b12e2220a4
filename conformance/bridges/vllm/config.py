"""``check_and_update_config`` of a vLLM platform, run in a child process.

vLLM calls the hook while it builds a ``VllmConfig``, and CPU's version rewrites the
calling process's environment (``LD_PRELOAD``, ``VLLM_WORKER_MULTIPROC_METHOD``, ...),
which would leak into every later test. So the bridge builds the ``VllmConfig`` the
kit's ``EngineConfig`` describes in one long-lived spawned child, the way vLLM's engine
does (its ``__post_init__`` runs the hook), brings back what the hook made of the
config, puts the child's environment back after each call, and reports what changed
as a ``VllmEnvironmentWarning``.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import functools
import json
import multiprocessing
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from conformance.reference_engine.models.config import get_model_config, to_hf_config


class VllmEnvironmentWarning(UserWarning):
    """vLLM's config hook changed the process environment (seen in the child)."""


@functools.cache
def _child() -> concurrent.futures.ProcessPoolExecutor:
    pool = concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn"))
    atexit.register(pool.shutdown, cancel_futures=True)
    return pool


def check_and_update_in_child(platform_name: str, config) -> None:
    """Let vLLM's platform ``platform_name`` (a ``vllm:`` plugin name without the
    prefix) check ``config`` (the kit's ``EngineConfig``): a refusal raises
    ``ValueError`` with vLLM's message; an accepted config takes vLLM's block size."""
    request = {"model": config.model, "dtype": str(config.dtype).removeprefix("torch."),
               "kv_cache_dtype": config.kv_cache_dtype, "block_size": config.block_size,
               "tensor_parallel_size": config.tensor_parallel_size,
               "quantization": config.quantization, "max_model_len": config.max_model_len}
    answer = _child().submit(_build_vllm_config, platform_name, request).result()
    if answer["environment"]:
        changes = ", ".join(f"{k}={v!r}" for k, v in sorted(answer["environment"].items()))
        warnings.warn(VllmEnvironmentWarning(
            f"vLLM's check_and_update_config changed the process environment: {changes}"),
            stacklevel=3)
    if "refusal" in answer:
        if answer["refusal_is_value_error"]:
            raise ValueError(answer["refusal"])
        raise RuntimeError(f"vLLM refused with an error other than ValueError: {answer['refusal']}")
    config.block_size = answer["block_size"]


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


def _build_vllm_config(platform_name: str, request: dict) -> dict:
    """In the child: build the ``VllmConfig``; what it became, and the environment
    changes, which are then undone."""
    from conformance.bridges.vllm import bridged

    getattr(bridged, platform_name)  # makes vLLM's platform current in this process
    from vllm.config import CacheConfig, ModelConfig, ParallelConfig, VllmConfig

    answer: dict = {}
    with restored_environment() as changed:
        try:
            model_config = ModelConfig(
                model=model_config_folder(request["model"]), dtype=request["dtype"],
                quantization=request["quantization"], max_model_len=request["max_model_len"],
                skip_tokenizer_init=True)
            vllm_config = VllmConfig(
                model_config=model_config,
                cache_config=CacheConfig(block_size=request["block_size"],
                                         cache_dtype=request["kv_cache_dtype"]),
                parallel_config=ParallelConfig(tensor_parallel_size=request["tensor_parallel_size"]))
            answer["block_size"] = vllm_config.cache_config.block_size
        except Exception as exc:
            answer["refusal"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            answer["refusal_is_value_error"] = isinstance(exc, ValueError)
    answer["environment"] = changed
    return answer
