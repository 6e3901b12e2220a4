"""What ``conformance init`` writes: a plugin package rendered from ``templates/``.

The package is a platform on ``TorchDevicePlatform`` with capabilities to edit, an
attention backend and a communicator to fill in (stubs that raise
``NotImplementedError`` naming what to write), an expectations file, a fleet entry for
CI, a README and a test folder. With ``from_reference`` the attention backend and the
communicator are the reference engine's, and on ``cpu`` the host runtime that
``torch.cpu`` lacks is the reference ``cpu`` platform's: the package then passes the
suites as written, so an author sees the whole loop work before changing a line.
"""

from __future__ import annotations

import dataclasses
import inspect
import keyword
import re
from pathlib import Path

import jinja2

from conformance.contract.platform import Platform
from conformance.contract.torch_device import TorchDevicePlatform

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: Device types whose torch dispatch key and distributed backend torch (or the
#: vendor's extension) fixes; any other type gets PrivateUse1 and gloo, to edit.
KNOWN_DEVICE_TYPES = {
    "cpu": ("CPU", "gloo"),
    "cuda": ("CUDA", "nccl"),
    "xpu": ("XPU", "xccl"),
    "hpu": ("HPU", "hccl"),
    "npu": ("PrivateUse1", "hccl"),
    "privateuseone": ("PrivateUse1", "gloo"),
}

#: The reference engine's attention backend per device type it runs on.
REFERENCE_ATTENTION = {
    "cpu": "conformance.reference_engine.attention.cpu_attn.CpuAttentionBackend",
    "cuda": "conformance.reference_engine.attention.triton_attn.TritonAttentionBackend",
}
REFERENCE_COMMUNICATOR = (
    "conformance.reference_engine.distributed.torch_communicator.TorchDistributedCommunicator")
DEVICE_TYPE_PATTERN = r"[a-z][a-z0-9_]{0,39}"


class InitError(ValueError):
    """Bad input to ``conformance init`` (one-line message)."""


@dataclasses.dataclass(frozen=True)
class RuntimeGap:
    """A ``Platform`` method the device module cannot serve, as the generated
    override needs it: its parameters, the call that forwards them, what is missing."""

    method: str
    lacks: str
    parameters: str
    arguments: str
    returns: str


@dataclasses.dataclass(frozen=True)
class PluginSpec:
    name: str
    device_type: str
    from_reference: bool

    @property
    def package(self) -> str:
        return f"{self.name}_plugin"

    @property
    def class_prefix(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_") if part)

    @property
    def distribution(self) -> str:
        return f"{self.name.replace('_', '-')}-platform-plugin"

    @property
    def dispatch_key(self) -> str:
        return KNOWN_DEVICE_TYPES.get(self.device_type, ("PrivateUse1", "gloo"))[0]

    @property
    def dist_backend(self) -> str:
        return KNOWN_DEVICE_TYPES.get(self.device_type, ("PrivateUse1", "gloo"))[1]


def check_spec(name: str, device_type: str, from_reference: bool) -> PluginSpec:
    """The spec, or an ``InitError`` naming the value that is wrong."""
    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        raise InitError(f"--name {name!r} is not a Python identifier (letters, digits and "
                        "'_', not starting with a digit): it names the package and entry point")
    if not re.fullmatch(DEVICE_TYPE_PATTERN, device_type):
        raise InitError(f"--device-type {device_type!r} is not a torch device type name "
                        f"(lower-case, matching {DEVICE_TYPE_PATTERN}), e.g. cpu, cuda, xpu, npu")
    if from_reference and device_type not in REFERENCE_ATTENTION:
        raise InitError(f"--from-reference needs --device-type {' or '.join(REFERENCE_ATTENTION)}: "
                        f"the reference engine's attention backend does not run on {device_type!r}")
    return PluginSpec(name, device_type, from_reference)


def runtime_gaps(device_type: str) -> list[RuntimeGap] | None:
    """What ``torch.<device_type>`` lacks of the device runtime, or None when torch has
    no such device module in this environment (the vendor's extension is absent)."""
    probe = type("Probe", (TorchDevicePlatform,), {"device_type": device_type})
    try:
        missing = probe.missing_runtime()
    except (RuntimeError, AttributeError):
        return None
    return [_gap(method, lacks) for method, lacks in missing.items()]


def _gap(method: str, lacks: str) -> RuntimeGap:
    signature = inspect.signature(getattr(Platform, method))
    parameters = [f"{p.name}: {p.annotation}" + ("" if p.default is p.empty else f" = {p.default!r}")
                  for p in signature.parameters.values()]
    return RuntimeGap(method, lacks, ", ".join(parameters),
                      ", ".join(signature.parameters), str(signature.return_annotation))


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
        autoescape=False,  # Python, TOML and Markdown sources, not HTML
    )


def render(spec: PluginSpec) -> dict[Path, str]:
    """Every file of the package, by its path relative to the package's folder."""
    gaps = runtime_gaps(spec.device_type)
    context = {
        "spec": spec, "gaps": gaps or [], "gaps_known": gaps is not None,
        "host_runtime": spec.from_reference and spec.device_type == "cpu",
        "attention_cls": REFERENCE_ATTENTION.get(spec.device_type) if spec.from_reference
        else f"{spec.package}.attention.{spec.class_prefix}AttentionBackend",
        "communicator_cls": REFERENCE_COMMUNICATOR if spec.from_reference
        else f"{spec.package}.communicator.{spec.class_prefix}Communicator",
    }
    environment = _environment()
    files = {}
    for template in sorted(TEMPLATES.rglob("*.j2")):
        relative = template.relative_to(TEMPLATES).with_suffix("")
        if spec.from_reference and relative.name in ("attention.py", "communicator.py"):
            continue  # the reference engine's components stand in for them
        target = Path(str(relative).replace("package", spec.package, 1)
                      .replace("NAME", spec.name))
        files[target] = environment.get_template(template.relative_to(TEMPLATES).as_posix()).render(context)
    return files


def write_plugin(path: Path, spec: PluginSpec) -> list[Path]:
    """Write the package into ``path`` (new or empty); the files written."""
    if path.exists() and not path.is_dir():
        raise InitError(f"{path} exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        raise InitError(f"{path} exists and is not empty: give a new or empty folder")
    files = render(spec)  # everything rendered before anything is written
    written = []
    for relative, text in files.items():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
