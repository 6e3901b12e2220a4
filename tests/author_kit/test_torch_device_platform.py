"""``TorchDevicePlatform``: the device runtime forwarded to a torch device module, the
gaps of that module named precisely, and ``cuda`` built on it."""

from __future__ import annotations

import json
import types

import pytest
import torch
from author_kit_plugins import TorchCpuPlatform
from conftest import TEST_PLUGINS

from conformance.contract.platform import Platform
from conformance.contract.torch_device import FORWARDED, TorchDevicePlatform
from conformance.reference_engine.platforms.cuda import CudaPlatform


class _Recorder:
    """A fake device module: every function records its call and answers ``answer``."""

    def __init__(self, **answers) -> None:
        self.calls: list[tuple] = []
        for name, answer in answers.items():
            setattr(self, name, self._function(name, answer))

    def _function(self, name, answer):
        def function(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return answer
        return function


def _platform_on(module) -> type[TorchDevicePlatform]:
    return type("FakePlatform", (TorchDevicePlatform,), {
        "device_type": "fake", "device_module": classmethod(lambda cls: module)})


def test_runtime_forwards_to_the_device_module():
    properties = types.SimpleNamespace(total_memory=8 << 30)
    module = _Recorder(is_available=True, device_count=2, set_device=None, current_device=1,
                       get_device_name="Fake 9000", get_device_capability=(9, 0),
                       get_device_properties=properties, mem_get_info=(1 << 30, 8 << 30),
                       memory_allocated=4096, synchronize=None, Stream="stream",
                       manual_seed_all=None, empty_cache=None)
    fake = _platform_on(module)
    assert fake.is_available() is True and fake.device_count() == 2
    fake.set_device(torch.device("cpu", 0))
    assert fake.current_device() == 1
    assert fake.get_device_name(1) == "Fake 9000"
    assert fake.get_device_capability(1) == (9, 0) and fake.get_device_capability(1).major == 9
    assert fake.get_device_total_memory(1) == 8 << 30
    assert fake.mem_get_info(1) == (1 << 30, 8 << 30)
    assert fake.memory_allocated(1) == 4096
    fake.synchronize(1)
    fake.manual_seed_all(7)
    fake.empty_cache()
    assert fake.Stream() == "stream"
    called = [(name, args) for name, args, _ in module.calls]
    assert ("set_device", (torch.device("cpu", 0),)) in called
    assert ("memory_allocated", (1,)) in called and ("manual_seed_all", (7,)) in called
    assert ("synchronize", (1,)) in called and ("empty_cache", ()) in called
    assert fake.missing_runtime() == {"Event": "torch.fake.Event"}


def test_a_missing_function_names_device_type_function_and_method():
    fake = _platform_on(_Recorder(device_count=1))
    with pytest.raises(NotImplementedError) as raised:
        fake.memory_allocated(0)
    assert str(raised.value) == ("FakePlatform: torch.fake has no memory_allocated(), which "
                                 "Platform.memory_allocated needs; override memory_allocated "
                                 "in FakePlatform")
    with pytest.raises(NotImplementedError, match=r"no get_device_properties\(\), which "
                       r"Platform.get_device_total_memory needs"):
        fake.get_device_total_memory(0)
    assert set(fake.missing_runtime()) == set(FORWARDED) - {"device_count"}
    # Optional parts: no capability where the idea does not apply, no cache to empty.
    assert fake.get_device_capability(0) is None
    fake.empty_cache()


def test_timed_events_need_a_device_event_that_times():
    class UntimedEvent:
        def record(self, stream=None): ...

    class TimedEvent:
        def __init__(self, enable_timing=False):
            self.enable_timing = enable_timing

    untimed = _platform_on(types.SimpleNamespace(Event=UntimedEvent))
    assert isinstance(untimed.Event(), UntimedEvent)
    with pytest.raises(NotImplementedError, match=r"torch.fake.Event takes no enable_timing"):
        untimed.Event(enable_timing=True)
    assert untimed.missing_runtime()["Event"] == "torch.fake.Event(enable_timing=True)"
    assert _platform_on(types.SimpleNamespace(Event=TimedEvent)).Event(True).enable_timing


def test_torch_cpu_gaps_are_named():
    """What torch.cpu lacks, as the platform reports it (and conformance init prints)."""
    assert TorchCpuPlatform.missing_runtime() == {
        "get_device_name": "torch.cpu.get_device_name",
        "get_device_total_memory": "torch.cpu.get_device_properties",
        "mem_get_info": "torch.cpu.mem_get_info",
        "memory_allocated": "torch.cpu.memory_allocated",
        "manual_seed_all": "torch.cpu.manual_seed_all",
        "Event": "torch.cpu.Event(enable_timing=True)",
    }
    assert TorchCpuPlatform.current_device() == 0  # torch.cpu answers "cpu"
    assert TorchCpuPlatform.is_pin_memory_available() is False


def test_cuda_is_built_on_it_without_forwards_of_its_own():
    assert issubclass(CudaPlatform, TorchDevicePlatform) and not CudaPlatform.__abstractmethods__
    runtime = {name for name, value in vars(Platform).items()
               if getattr(value, "__isabstractmethod__", False)} - {
        "get_attn_backend_cls", "get_device_communicator_cls"}
    assert runtime and not runtime & set(vars(CudaPlatform)), "cuda still forwards by hand"
    assert CudaPlatform.missing_runtime() == {}  # torch.cuda has everything, GPU or not


# What torch.cpu lacks breaks exactly these contracts; everything else passes there.
TORCH_CPU_GAPS = {
    "platform.identity.names": "torch.cpu has no get_device_name()",
    "platform.runtime.mem_get_info": "torch.cpu has no mem_get_info()",
    "platform.runtime.memory": "torch.cpu has no memory_allocated()",
    "platform.runtime.seeding": "torch.cpu has no manual_seed_all()",
    "platform.runtime.events": "torch.cpu.Event takes no enable_timing",
}


def test_platform_suite_on_torch_cpu(install, tmp_path, kit):
    """Rule: on torch.cpu, TorchDevicePlatform passes every Platform contract torch's
    CPU module allows, and each one it does not fails naming the missing function."""
    env = install("torch-cpu-plugin", "1.0", {"torch_cpu": "author_kit_plugins:TorchCpuPlatform.plugin"},
                  TEST_PLUGINS)
    run = kit("run", "--platform=torch_cpu", "--suite=platform", "--record=run.json", env=env)
    record = json.loads((tmp_path / "run.json").read_text())
    outcomes = {c: r["outcome"] for c, r in record["contracts"].items()}
    failed = {c for c, o in outcomes.items() if o == "failed"}
    assert failed == set(TORCH_CPU_GAPS), run.stdout + run.stderr
    for test in record["tests"]:
        if test["contract"] in TORCH_CPU_GAPS:
            assert TORCH_CPU_GAPS[test["contract"]] in test["message"], test
    assert set(outcomes.values()) - {"failed"} <= {"passed", "not_supported"}, outcomes
