"""What a bridged run tests of the plugin, for the record's ``plugin.bridge`` and the
run's header: the attention backend class the plugin's platform selects (by its
qualified name, as vLLM imports it), and what its ``check_and_update_config`` changes
of the kit's requests (every declared dtype, KV-cache dtype and block size, as the
Platform suite asks them), or sets besides.
"""

from __future__ import annotations

import itertools

from conformance.bridges.vllm import bridged
from conformance.bridges.vllm.attention import MODEL
from conformance.bridges.vllm.capabilities import default_backend
from conformance.bridges.vllm.config import build_vllm_config, restored_environment


def tested(name: str) -> dict:
    """``attention_backend``: the qualified name of the backend class tested;
    ``config_changes``: each change of the plugin's hook to a field the kit asked for,
    as "the request: field before -> after"; ``config_hook_sets``: the hook's other
    changes (worker class, executor, ...) to the first declared request."""
    platform = getattr(bridged, name)
    backend = default_backend(platform.vllm_platform)
    declared = platform.capabilities
    changes: list[str] = []
    settings: list[str] = []
    for dtype, kv_cache_dtype, block_size in itertools.product(
            declared.dtypes, declared.kv_cache_dtypes, declared.block_sizes):
        dtype_name = str(dtype).removeprefix("torch.")
        with restored_environment():
            _, hook_changes = build_vllm_config(MODEL, dtype_name, block_size, kv_cache_dtype)
        request = f"{dtype_name}, blocks of {block_size}, KV-cache dtype {kv_cache_dtype!r}"
        changes += [f"{request}: {change}" for change in hook_changes if change.requested]
        if not settings:
            settings = [str(change) for change in hook_changes if not change.requested]
    return {"attention_backend": f"{backend.__module__}.{backend.__qualname__}",
            "config_changes": changes, "config_hook_sets": settings}
