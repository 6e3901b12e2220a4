"""Whose fault it is: the three ways a bridged call can fail besides the kit's rule.

- ``VllmInterfaceGap``: the kit's contract asks for something vLLM's interface lacks;
- ``VllmPluginError``: the vLLM plugin itself is wrong (a backend name that does not
  import, a class of the wrong kind), named by the plugin's own qualified names;
- ``BridgeLimitation``: something vLLM has that the bridge does not drive: the kit's
  limit, never used for what the plugin chose (``config_changes`` blames those).
"""

from __future__ import annotations


class VllmInterfaceGap(Exception):
    """The kit's contract asks for something vLLM's Platform interface does not have."""


class VllmPluginError(Exception):
    """The vLLM plugin under test names or returns something vLLM itself could not use."""


class BridgeLimitation(NotImplementedError):
    """Something vLLM has that the bridge does not drive yet: the kit's limit, not the
    plugin's failure, and said so."""


def plugin_label() -> str:
    """The plugin under test as its author knows it: the qualified name of vLLM's
    current platform class (the bridge makes the plugin's platform current)."""
    from vllm.platforms import current_platform

    platform_class = type(current_platform)
    return f"{platform_class.__module__}.{platform_class.__qualname__}"
