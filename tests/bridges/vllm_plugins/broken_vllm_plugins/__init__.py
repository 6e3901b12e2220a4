"""vLLM platform plugin functions (group ``vllm.platform_plugins``): each names its
platform class, as vLLM's protocol asks. The CPU is always usable, so none answers
None. Importing this package imports nothing heavy, as vLLM asks of plugins."""

from __future__ import annotations

_PLATFORMS = "broken_vllm_plugins.platforms"


def faithful() -> str:
    return f"{_PLATFORMS}.FaithfulPlatform"


def stock_named_backend() -> str:
    return f"{_PLATFORMS}.StockNamedBackendPlatform"


def unimportable_backend() -> str:
    return f"{_PLATFORMS}.UnimportableBackendPlatform"


def block_size_hook() -> str:
    return f"{_PLATFORMS}.BlockSizeHookPlatform"


def dtype_hook() -> str:
    return f"{_PLATFORMS}.DtypeHookPlatform"


def all_gather_dims() -> str:
    return f"{_PLATFORMS}.AllGatherDimsPlatform"
