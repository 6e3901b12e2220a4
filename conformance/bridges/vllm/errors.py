"""Whose fault it is: the three ways a bridged call can fail besides the kit's rule.

- ``VllmInterfaceGap``: the kit's contract asks for something vLLM's interface lacks;
- ``VllmPluginError``: the vLLM plugin itself is wrong (a backend name that does not
  import, a class of the wrong kind), named by the plugin's own qualified names;
- ``BridgeLimitation``: something vLLM has that the bridge does not drive: the kit's
  limit, never used for what the plugin chose (``config_changes`` blames those).

``named_class`` imports a class a plugin names (its platform, attention backend,
communicator) as vLLM imports it, and says in one line who named what when it fails.
"""

from __future__ import annotations

import pkgutil


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


def named_class(qualname: str, base: type, named_by: str,
                error: type[Exception] = VllmPluginError) -> type:
    """The class ``qualname`` names, imported as vLLM imports the qualified names a
    plugin returns. ``named_by`` ("vLLM platform plugin 'pkg.Platform':
    get_attn_backend_cls names") starts the ``error`` raised when it does not import or
    is not a subclass of vLLM's ``base``."""
    try:
        named = pkgutil.resolve_name(qualname)
    except Exception as exc:
        raise error(f"{named_by} {qualname!r}, which does not import: {type(exc).__name__}: {exc}") from exc
    if not (isinstance(named, type) and issubclass(named, base)):
        raise error(f"{named_by} {qualname!r}, which is {named!r}, not a subclass of vLLM's {base.__name__}")
    return named
