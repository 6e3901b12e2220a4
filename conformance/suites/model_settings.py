"""What the Worker and Engine suites share: the tiny model they run, its limits, the
reference platform they compare with, and how they run it on the host.

The model is chosen from the plugin's declaration: the tiny preset in a head size the
plugin declares, in a declared dtype and block size. Where the reference platform
cannot run that shape (a head size or block size only the plugin has), the tests are
``not_supported``: there is nothing to compare with, which is not the plugin's fault."""

from __future__ import annotations

import contextlib
import os

import torch

from conformance.contract.discovery import load_platform
from conformance.contract.platform import Platform
from conformance.reference_engine.models.config import tiny_variant
from conformance.suites.support import not_supported

MAX_MODEL_LEN = 128


def reference_platform() -> type[Platform]:
    """The platform every other is compared with: the built-in ``cpu``."""
    return load_platform("cpu")


@contextlib.contextmanager
def host_threads(n: int = 1):
    """At most ``n`` host intra-op threads inside the block, here and in the rank
    processes started in it. The tiny model's ops are too small to gain from more, and
    on a shared machine (kit tests run suites side by side) each op's thread barrier
    then waits for a time slice: a step can take 50x longer. Device work is unaffected."""
    previous, variable = torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")
    torch.set_num_threads(min(n, previous))
    os.environ["OMP_NUM_THREADS"] = str(min(n, previous))
    try:
        yield
    finally:
        torch.set_num_threads(previous)
        if variable is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = variable


def suite_dtype(platform: type[Platform]) -> torch.dtype:
    """float32 where declared (exact comparisons), else the first declared dtype."""
    dtypes = platform.capabilities.dtypes
    return torch.float32 if torch.float32 in dtypes else dtypes[0]


def block_size_for(platform: type[Platform]) -> int:
    """16 (the engine's default) where declared, else the first declared size."""
    block_sizes = platform.capabilities.block_sizes
    return 16 if 16 in block_sizes else block_sizes[0]


def model_for(platform: type[Platform]) -> str:
    """The tiny model in the smallest head size the platform declares."""
    return tiny_variant(min(platform.capabilities.head_sizes))


def require_reference_runs(platform: type[Platform]) -> None:
    """End the test as ``not_supported`` unless the reference platform declares the
    head size, dtype and block size the suites run ``platform`` in."""
    reference = reference_platform().capabilities
    gaps = [f"head size {size}" for size in [min(platform.capabilities.head_sizes)]
            if size not in reference.head_sizes]
    gaps += [f"dtype {dtype_name(dtype)}" for dtype in [suite_dtype(platform)]
             if dtype not in reference.dtypes]
    gaps += [f"block size {size}" for size in [block_size_for(platform)]
             if size not in reference.block_sizes]
    if gaps:
        not_supported(f"the reference platform cannot run {', '.join(gaps)}, the smallest "
                      "model this platform declares: there is nothing to compare with")


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")
