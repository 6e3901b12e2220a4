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
    promote_when = "official"          # required with soft_fail: a tier or rule id of
                                       # the tier policy (docs/tiers.md), never prose
    retired = false                    # true: no agent serves the queue any more
    parallelism = 2                    # optional: the run split over 2 jobs (shards)
    priority = 5                       # optional: Buildkite job priority (higher first)
    if = "build.branch == 'main'"      # optional: run only when this condition holds
    notify = [{ slack = "#npu-ci" }]   # optional: step notifications
    health_command = "npu-smi info"    # optional: pre-flight vendor health check
    shared_nodes = ["/dev/davinci_manager"]  # optional: more nodes every job holds

Top-level ``priority``, ``if`` and ``shared_nodes`` are defaults for every device;
top-level ``notify`` is the build's (``email``, ``slack`` or ``webhook``);
``test_engine_secret`` names the Buildkite secret holding a Test Engine suite token;
``release_records`` (e.g. ``"matrix/records"``), the folder of the checkout holding
the records' history, adds the release gate (``conformance release-check``) on
release branches (docs/tiers.md).

The same description of one device can come from flags (``device_from_flags``).
Names follow the patterns in ``conformance.ci.names``; anything else in a fleet file
is refused with one line naming the file, the device and the field.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from conformance.ci.layout import FIXED_NAMES, generated_names
from conformance.ci.names import (
    SUITE_PATTERN,
    TAG_NAME_PATTERN,
    TAG_VALUE_PATTERN,
    FleetError,
    check_name,
    check_text,
    shown,
)
from conformance.tiers.policy import PolicyError, load_policy

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
    parallelism: int = 1
    priority: int | None = None
    condition: str | None = None  # the step's `if`
    notify: tuple[tuple[str, str], ...] = ()
    health_command: str | None = None
    shared_nodes: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Fleet:
    devices: tuple[Device, ...]
    collector_queue: str | None = None
    notify: tuple[tuple[str, str], ...] = ()
    test_engine_secret: str | None = None
    release_records: str | None = None  # the records' history: the release gate's input

    def active(self) -> tuple[Device, ...]:
        return tuple(d for d in self.devices if not d.retired)

    def retired(self) -> tuple[Device, ...]:
        return tuple(d for d in self.devices if d.retired)


#: Field names as a fleet file spells them, where that differs from Device's.
_SPELLED = {"condition": "if"}
_FIELDS = [_SPELLED.get(field.name, field.name) for field in dataclasses.fields(Device)]
#: Top-level keys a device inherits unless it sets its own.
DEFAULTS = ("priority", "if", "shared_nodes")
TOP_LEVEL = ("device", "collector_queue", "notify", "test_engine_secret", "release_records", *DEFAULTS)
#: Buildkite's job priorities are integers; beyond this they only say "first".
PRIORITY_RANGE = (-1000, 1000)
MAX_PARALLELISM = 64
#: Notification kinds, by where they go: a step's, or the whole build's.
STEP_NOTIFY = ("slack",)
BUILD_NOTIFY = ("slack", "email", "webhook")
#: A device node: an absolute path of plain characters, never a pattern.
NODE_PATTERN = r"(/[A-Za-z0-9_.+-]{1,60}){1,8}"
SECRET_PATTERN = r"[A-Za-z_][A-Za-z0-9_]{0,99}"


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


def _notify(value: object, what: str, kinds: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value:
        raise FleetError(f"{what} must be a non-empty list of {{ KIND = \"target\" }} tables "
                         f"(KIND: {', '.join(kinds)}), not {shown(value)}")
    found = []
    for item in value:
        if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in kinds:
            raise FleetError(f"{what}: {shown(item)} must be one {{ KIND = \"target\" }} "
                             f"with KIND one of {', '.join(kinds)}")
        ((kind, target),) = item.items()
        found.append((kind, check_text(target, f"{what}: {kind}", limit=200)))
    return tuple(found)


def _nodes(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise FleetError(f"{what} must be a non-empty list of device paths, not {shown(value)}")
    for node in value:
        check_name(node, f"{what}: node", NODE_PATTERN)
        if "/../" in node + "/" or "/./" in node + "/":
            raise FleetError(f"{what}: node {shown(node)} must not hold . or .. parts")
    return tuple(value)


def _suites(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise FleetError(f"{what} must be a non-empty list of suite names, not {shown(value)}")
    return tuple(check_name(suite, f"{what}: suite", SUITE_PATTERN) for suite in value)


def make_device(fields: dict, where: str, spelling: dict[str, str] | None = None) -> Device:
    """A checked Device from ``fields`` (a fleet file's table or the flags);
    ``where`` names its origin and ``spelling`` the fields' names there, in errors."""
    def named(field: str) -> str:
        return (spelling or {}).get(field, _SPELLED.get(field, field))

    if not isinstance(fields, dict):
        raise FleetError(f"{where} must be a table of fields, not {shown(fields)}")
    unknown = sorted(set(fields) - set(_FIELDS))
    fields = {name: fields[_SPELLED.get(name, name)] for name in
              [f.name for f in dataclasses.fields(Device)] if _SPELLED.get(name, name) in fields}
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
        "parallelism": lambda v, w: _integer(v, w, 1, MAX_PARALLELISM),
        "priority": lambda v, w: _integer(v, w, *PRIORITY_RANGE),
        "condition": lambda v, w: check_text(v, w, limit=500),
        "notify": lambda v, w: _notify(v, w, STEP_NOTIFY),
        "health_command": check_text,
        "shared_nodes": _nodes,
    }
    for field, check in checks.items():
        if fields.get(field) is not None:
            checked[field] = check(fields[field], f"{where}: {named(field)}")
    device = Device(**checked)
    if device.soft_fail and not device.promote_when:
        raise FleetError(f"{where}: {named('soft_fail')} needs {named('promote_when')}, the "
                         "tier or rule of the tier policy that makes its failures count (e.g. "
                         "\"official\")")
    if device.promote_when and not device.soft_fail:
        raise FleetError(f"{where}: {named('promote_when')} is only for a "
                         f"{named('soft_fail')} device")
    if device.promote_when:
        check_promotion(device.promote_when, f"{where}: {named('promote_when')}")
    return device


def check_promotion(reference: str, what: str) -> str:
    """``reference``, a tier or rule id of the kit's tier policy (docs/tiers.md): the
    promotion rule is the policy's, computed from records, never prose."""
    try:
        load_policy().promotion(reference)
    except PolicyError as exc:
        raise FleetError(f"{what}: {exc}") from None
    return reference


def _check_generated_names(devices: list[Device], where: str) -> None:
    """Refuse a device whose generated names (step keys, annotation contexts,
    meta-data keys, artifact folders) equal, ignoring case, another device's or a
    fixed one's: Buildkite would reject the upload or one summary would replace
    another, and two folders differing in case are one on macOS and Windows."""
    taken = {(kind, name.casefold()): holder for (kind, name), holder in FIXED_NAMES.items()}
    names = [device.name for device in devices]
    for name in names:
        if names.count(name) > 1:
            raise FleetError(f"{where}: two devices are named {name!r}")
    for device in devices:
        for kind, name in generated_names(device.name, device.parallelism):
            holder = taken.get((kind, name.casefold()))
            if holder is not None:
                raise FleetError(f"{where}: device {device.name!r} would have the {kind} "
                                 f"{name!r}, which is {holder}'s: rename the device")
            taken[(kind, name.casefold())] = f"device {device.name!r}"


def make_fleet(devices: list[Device], where: str, **settings) -> Fleet:
    """A Fleet, refusing what would make a pipeline that cannot work. ``settings``
    are the fleet-wide fields of ``Fleet`` (collector_queue, priority, ...)."""
    _check_generated_names(devices, where)
    retired_queues = {d.queue: d.name for d in devices if d.retired}
    for device in devices:
        if not device.retired and device.queue in retired_queues:
            raise FleetError(
                f"{where}: device {device.name!r} targets queue {device.queue!r}, which "
                f"device {retired_queues[device.queue]!r} marks retired: no agent would "
                "take its jobs")
    fleet = Fleet(tuple(devices), **settings)
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
    unknown = sorted(set(data) - set(TOP_LEVEL))
    if unknown:
        raise FleetError(f"{where}: unknown top-level key {unknown[0]!r} "
                         f"(known: {', '.join(TOP_LEVEL)})")
    entries = data.get("device")
    if not isinstance(entries, list) or not entries:
        raise FleetError(f"{where}: no [[device]] table")
    defaults = {key: data[key] for key in DEFAULTS if key in data}
    devices = [make_device({**defaults, **entry} if isinstance(entry, dict) else entry,
                           f"{where}: device {index + 1}")
               for index, entry in enumerate(entries)]
    settings = {}
    if data.get("collector_queue") is not None:
        settings["collector_queue"] = check_name(data["collector_queue"],
                                                 f"{where}: collector_queue")
    if data.get("notify") is not None:
        settings["notify"] = _notify(data["notify"], f"{where}: notify", BUILD_NOTIFY)
    if data.get("test_engine_secret") is not None:
        settings["test_engine_secret"] = check_name(
            data["test_engine_secret"], f"{where}: test_engine_secret", SECRET_PATTERN)
    if data.get("release_records") is not None:
        settings["release_records"] = check_text(data["release_records"], f"{where}: release_records")
    return make_fleet(devices, where, **settings)


def device_from_flags(fields: dict, collector_queue: str | None,
                      spelling: dict[str, str]) -> Fleet:
    """A one-device fleet from command-line flags (unset flags are None); ``spelling``
    maps each field to its flag, for error messages."""
    present = {k: v for k, v in fields.items() if v is not None}
    if "platform" in present:
        present.setdefault("name", present["platform"])
    device = make_device(present, "command line", spelling)
    return make_fleet([device], "command line", collector_queue=collector_queue)
