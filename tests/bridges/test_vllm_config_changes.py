"""What a vLLM plugin's config hook changes, without vLLM: the whole-config diff, the
recorder around the hook, and the failure that blames the plugin's change; and the
kit's name of a backend the plugin names by qualified name."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.bridges.vllm import attention
from conformance.bridges.vllm.config_changes import (
    ConfigChange,
    PluginChangedConfig,
    diff,
    flatten,
    recording_hook,
    refuse_changed,
)
from conformance.bridges.vllm.errors import BridgeLimitation


@dataclasses.dataclass
class CacheConfig:
    block_size: int = 32
    cache_dtype: str = "auto"


@dataclasses.dataclass
class ModelConfig:
    dtype: str = "float32"
    enforce_eager: bool = False


@dataclasses.dataclass
class VllmConfig:
    """Shaped like vLLM's: sections that are dataclasses, and plain fields."""

    cache_config: CacheConfig = dataclasses.field(default_factory=CacheConfig)
    model_config: ModelConfig = dataclasses.field(default_factory=ModelConfig)
    instance_id: str = "a"


class VendorPlatform:
    """vLLM calls the hook on the platform instance, as ``current_platform``."""

    @classmethod
    def check_and_update_config(cls, vllm_config) -> None:
        vllm_config.cache_config.block_size = 128
        vllm_config.model_config.enforce_eager = True
        vllm_config.instance_id = "b"


def test_every_field_of_every_section_is_seen():
    assert flatten(VllmConfig()) == {
        "cache_config.block_size": "32", "cache_config.cache_dtype": "'auto'",
        "model_config.dtype": "'float32'", "model_config.enforce_eager": "False",
        "instance_id": "'a'"}


def test_the_recorder_sees_what_the_hook_changed_and_leaves_the_platform_as_it_was():
    platform = VendorPlatform()
    with recording_hook(platform) as calls:
        platform.check_and_update_config(VllmConfig())
    assert calls == [[ConfigChange("cache_config.block_size", "32", "128"),
                      ConfigChange("instance_id", "'a'", "'b'"),
                      ConfigChange("model_config.enforce_eager", "False", "True")]]
    assert [change.requested for change in calls[0]] == [True, False, True]
    assert "check_and_update_config" not in vars(platform)


def test_recorders_nest():
    platform = VendorPlatform()
    with recording_hook(platform) as outer:
        with recording_hook(platform) as inner:
            platform.check_and_update_config(VllmConfig())
        platform.check_and_update_config(VllmConfig())
    assert len(inner) == 1 and len(outer) == 2
    assert "check_and_update_config" not in vars(platform)


def test_a_change_to_what_the_test_needs_fails_blaming_the_plugin():
    changes = diff({"cache_config.block_size": "64", "model_config.enforce_eager": "False"},
                   {"cache_config.block_size": "128", "model_config.enforce_eager": "True"})
    refuse_changed("vendor.Platform", changes, ("model_config.dtype",), "a batch")  # not needed
    with pytest.raises(PluginChangedConfig) as error:
        refuse_changed("vendor.Platform", changes, ("cache_config.block_size",), "a batch with blocks of 64")
    assert str(error.value) == (
        "vLLM platform plugin 'vendor.Platform' changed the kit's request in "
        "check_and_update_config: cache_config.block_size 64 -> 128; vLLM never runs a batch "
        "with blocks of 64 as asked (the plugin's change, not the kit's limit)")


@pytest.mark.parametrize("qualname", [
    "vllm.v1.attention.backends.cpu_attn.CPUAttentionBackend",
    "vendor._private.attn.Backend",
])
def test_a_backend_is_named_by_its_qualified_name(qualname):
    module, _, name = attention.bridged_name(qualname).partition(":")
    assert module == attention.__name__
    assert name.replace("__", ".") == qualname


def test_a_name_the_bridge_cannot_encode_is_its_own_limit():
    with pytest.raises(BridgeLimitation, match=r"cannot name vLLM backend 'vendor_\.attn\.B'"):
        attention.bridged_name("vendor_.attn.B")
