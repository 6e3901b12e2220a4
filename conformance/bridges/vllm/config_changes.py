"""What a vLLM plugin's ``check_and_update_config`` changes, seen field by field.

vLLM calls the hook from ``VllmConfig.__post_init__``, on the whole config, and a
plugin may change anything there: the dtype, the block size, the cache dtype, eager
mode. The bridge runs it on the ``VllmConfig`` the kit's request describes and diffs
the whole config (every field of every section) just before and just after the hook,
so each change is known and blamed on the plugin, never on the kit or on vLLM.

Of the changes, those to a field the kit asked for (``REQUESTED``) decide what the kit
can judge: the bridge carries them into the bridged run, and where the run then is not
what the kit asked for, it fails with ``PluginChangedConfig`` naming the plugin's hook.
The others (CPU's hook sets the worker class and the executor, for instance) are the
plugin's settings, reported as they are.
"""

from __future__ import annotations

import contextlib
import dataclasses

#: The ``VllmConfig`` fields the kit's requests set (dtype, block size, KV-cache dtype,
#: tensor-parallel size, max model length, quantization, eager mode).
REQUESTED = frozenset({
    "model_config.dtype", "cache_config.block_size", "cache_config.cache_dtype",
    "parallel_config.tensor_parallel_size", "model_config.max_model_len",
    "model_config.quantization", "model_config.enforce_eager",
})


class PluginChangedConfig(AssertionError):
    """The plugin's ``check_and_update_config`` changed what the kit asked for, so vLLM
    never runs what the test asks: the plugin's change, and the test fails on it."""


@dataclasses.dataclass(frozen=True)
class ConfigChange:
    field: str  # "section.field" of the VllmConfig
    before: str  # repr
    after: str

    def __str__(self) -> str:
        return f"{self.field} {self.before} -> {self.after}"

    @property
    def requested(self) -> bool:
        """A field the kit's request set."""
        return self.field in REQUESTED


def flatten(vllm_config) -> dict[str, str]:
    """Every field of every section of ``vllm_config`` as ``"section.field": repr``."""
    fields: dict[str, str] = {}
    for section in dataclasses.fields(vllm_config):
        value = getattr(vllm_config, section.name)
        if not dataclasses.is_dataclass(value):
            fields[section.name] = _shown(value)
            continue
        for field in dataclasses.fields(value):
            fields[f"{section.name}.{field.name}"] = _shown(getattr(value, field.name, None))
    return fields


def _shown(value) -> str:
    # One line, as it goes into messages and the record; a str keeps its quotes.
    return " ".join(repr(value).split())


def diff(before: dict[str, str], after: dict[str, str]) -> list[ConfigChange]:
    return [ConfigChange(field, before.get(field, "<absent>"), after.get(field, "<absent>"))
            for field in sorted(before.keys() | after.keys()) if before.get(field) != after.get(field)]


@contextlib.contextmanager
def recording_hook(vllm_platform):
    """Within the block, every ``check_and_update_config`` vLLM calls on
    ``vllm_platform`` (its ``current_platform``) appends the list of what it changed to
    the list yielded. vLLM calls the hook on the instance, so the recorder is an
    attribute of the instance, removed afterwards."""
    hook = vllm_platform.check_and_update_config
    own = vars(vllm_platform)
    outer = own.get("check_and_update_config")  # a recorder around this one
    calls: list[list[ConfigChange]] = []

    def recorded(vllm_config) -> None:
        before = flatten(vllm_config)
        hook(vllm_config)
        calls.append(diff(before, flatten(vllm_config)))

    own["check_and_update_config"] = recorded
    try:
        yield calls
    finally:
        if outer is None:
            del own["check_and_update_config"]
        else:
            own["check_and_update_config"] = outer


def refuse_changed(plugin: str, changes: list[ConfigChange], fields: tuple[str, ...], what: str) -> None:
    """Raise ``PluginChangedConfig`` when the plugin's hook changed any of ``fields``
    (those the kit needs as asked to judge ``what``)."""
    changed = [str(change) for change in changes if change.field in fields]
    if changed:
        raise PluginChangedConfig(
            f"vLLM platform plugin {plugin!r} changed the kit's request in "
            f"check_and_update_config: {', '.join(changed)}; vLLM never runs {what} as asked "
            "(the plugin's change, not the kit's limit)")
