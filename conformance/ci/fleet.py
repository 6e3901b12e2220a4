"""The fleet: which device classes run the conformance suites in CI, and how.

A fleet file is TOML (``ci/buildkite/fleet.toml`` is the example), one ``[[device]]``
table per device class::

    collector_queue = "cpu"            # optional: where the matrix step runs

    [[device]]
    name = "npu-910b"                  # step key, artifact folder, annotation context
    platform = "my_npu"                # the plugin's entry-point name (--platform)
    queue = "npu"                      # the Buildkite queue of its agents
    tags = { device = "910b" }         # further agent tags a job's agent must have
    device_count = 1                   # agents are tagged device_count=N
    suites = ["platform", "attention"] # optional; default: every suite
    timeout_in_minutes = 90
    expectations = "ci/npu-waivers.toml"  # optional: the plugin's expectations file
    shared_device = "box1-npu0"        # optional: agents that share one physical device
    soft_fail = true                   # a new backend: its failures do not fail the build
    promote_when = "green on 10 consecutive nightly builds"  # required with soft_fail
    retired = false                    # true: no agent serves the queue any more

The same description of one device can come from flags (``device_from_flags``).
Names follow the patterns in ``conformance.ci.names``; anything else in a fleet file
is refused with one line naming the file, the device and the field.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from conformance.ci.names import (
    SUITE_PATTERN,
    TAG_NAME_PATTERN,
    TAG_VALUE_PATTERN,
    FleetError,
    check_name,
    check_text,
    shown,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_TIMEOUT_MINUTES = 90
#: Longer than a day is a job that hangs, not one that runs.
MAX_TIMEOUT_MINUTES = 24 * 60
#: Tags the generator sets itself from other fields.
RESERVED_TAGS = ("queue", "device_count")


@dataclasses.dataclass(frozen=True)
class Device:
    """One device class of the fleet: one step in the pipeline."""

    name: str
    platform: str
    queue: str
    tags: tuple[tuple[str, str], ...] = ()
    device_count: int = 1
    suites: tuple[str, ...] = ()
    timeout_in_minutes: int = DEFAULT_TIMEOUT_MINUTES
    expectations: str | None = None
    shared_device: str | None = None
    soft_fail: bool = False
    promote_when: str | None = None
    retired: bool = False
    retired_reason: str | None = None


@dataclasses.dataclass(frozen=True)
class Fleet:
    devices: tuple[Device, ...]
    collector_queue: str | None = None

    def active(self) -> tuple[Device, ...]:
        return tuple(d for d in self.devices if not d.retired)

    def retired(self) -> tuple[Device, ...]:
        return tuple(d for d in self.devices if d.retired)


_FIELDS = {field.name: field for field in dataclasses.fields(Device)}


def _integer(value: object, what: str, low: int, high: int) -> int:
    # bool is an int in Python; `timeout_in_minutes = true` is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FleetError(f"{what} must be an integer from {low} to {high}, not {shown(value)}")
    return value


def _boolean(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise FleetError(f"{what} must be true or false, not {shown(value)}")
    return value


def _tags(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise FleetError(f"{what} must be a table of tag = \"value\", not {shown(value)}")
    tags = []
    for name, tag_value in value.items():
        check_name(name, f"{what}: tag name", TAG_NAME_PATTERN)
        if name in RESERVED_TAGS:
            raise FleetError(f"{what}: tag {name!r} is set from the "
                             f"{'queue' if name == 'queue' else 'device_count'} field")
        tags.append((name, check_name(tag_value, f"{what}: tag {name}", TAG_VALUE_PATTERN)))
    return tuple(sorted(tags))


def _suites(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise FleetError(f"{what} must be a non-empty list of suite names, not {shown(value)}")
    return tuple(check_name(suite, f"{what}: suite", SUITE_PATTERN) for suite in value)


def make_device(fields: dict, where: str, spelling: dict[str, str] | None = None) -> Device:
    """A checked Device from ``fields`` (a fleet file's table or the flags);
    ``where`` names its origin and ``spelling`` the fields' names there, in errors."""
    def named(field: str) -> str:
        return (spelling or {}).get(field, field)

    unknown = sorted(set(fields) - set(_FIELDS))
    if unknown:
        raise FleetError(f"{where}: unknown field {unknown[0]!r} "
                         f"(known: {', '.join(_FIELDS)})")
    for required in ("platform", "queue", "name"):
        if required not in fields:
            raise FleetError(f"{where}: missing field {named(required)!r}")
    platform = check_name(fields["platform"], f"{where}: {named('platform')}")
    name = check_name(fields["name"], f"{where}: {named('name')}")
    where = f"{where} ({name})"
    checked = {
        "name": name,
        "platform": platform,
        "queue": check_name(fields["queue"], f"{where}: {named('queue')}"),
    }
    checks = {
        "tags": _tags,
        "device_count": lambda v, w: _integer(v, w, 1, 1024),
        "suites": _suites,
        "timeout_in_minutes": lambda v, w: _integer(v, w, 1, MAX_TIMEOUT_MINUTES),
        "expectations": check_text,
        "shared_device": check_name,
        "soft_fail": _boolean,
        "promote_when": check_text,
        "retired": _boolean,
        "retired_reason": check_text,
    }
    for field, check in checks.items():
        if fields.get(field) is not None:
            checked[field] = check(fields[field], f"{where}: {named(field)}")
    device = Device(**checked)
    if device.soft_fail and not device.promote_when:
        raise FleetError(f"{where}: {named('soft_fail')} needs {named('promote_when')}, the "
                         "rule that makes its failures count (e.g. \"green on 10 consecutive "
                         "nightly builds\")")
    if device.promote_when and not device.soft_fail:
        raise FleetError(f"{where}: {named('promote_when')} is only for a "
                         f"{named('soft_fail')} device")
    return device


def make_fleet(devices: list[Device], collector_queue: str | None, where: str) -> Fleet:
    """A Fleet, refusing what would make a pipeline that cannot work."""
    seen: dict[str, Device] = {}
    for device in devices:
        if device.name in seen:
            raise FleetError(f"{where}: two devices are named {device.name!r}")
        seen[device.name] = device
    retired_queues = {d.queue: d.name for d in devices if d.retired}
    for device in devices:
        if not device.retired and device.queue in retired_queues:
            raise FleetError(
                f"{where}: device {device.name!r} targets queue {device.queue!r}, which "
                f"device {retired_queues[device.queue]!r} marks retired: no agent would "
                "take its jobs")
    fleet = Fleet(tuple(devices), collector_queue)
    if not fleet.active():
        raise FleetError(f"{where}: no device left to test (every device is retired)")
    return fleet


def load_fleet(path: str | Path) -> Fleet:
    """The fleet described by the TOML file at ``path``."""
    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise FleetError(f"cannot read fleet file {where}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise FleetError(f"{where}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise FleetError(f"{where}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"device", "collector_queue"})
    if unknown:
        raise FleetError(f"{where}: unknown top-level key {unknown[0]!r} "
                         "(known: device, collector_queue)")
    entries = data.get("device")
    if not isinstance(entries, list) or not entries:
        raise FleetError(f"{where}: no [[device]] table")
    devices = [make_device(entry, f"{where}: device {index + 1}")
               for index, entry in enumerate(entries)]
    collector_queue = data.get("collector_queue")
    if collector_queue is not None:
        check_name(collector_queue, f"{where}: collector_queue")
    return make_fleet(devices, collector_queue, where)


def device_from_flags(fields: dict, collector_queue: str | None,
                      spelling: dict[str, str]) -> Fleet:
    """A one-device fleet from command-line flags (unset flags are None); ``spelling``
    maps each field to its flag, for error messages."""
    present = {k: v for k, v in fields.items() if v is not None}
    if "platform" in present:
        present.setdefault("name", present["platform"])
    device = make_device(present, "command line", spelling)
    return make_fleet([device], collector_queue, "command line")
