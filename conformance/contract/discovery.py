"""Finding platform plugins through entry points, loudly.

Each entry point in the group ``conformance.platform_plugins`` is a zero-argument
function that returns the qualified name of a ``Platform`` subclass when its device
is usable here, else None. Nothing is swallowed: every way a plugin can go wrong
becomes a ``PlatformPluginError`` whose message is one line naming the plugin and its
distribution, chained to the original exception where there is one.

A name ``NAMESPACE:NAME`` (``vllm:cpu``) is a plugin written for another engine's
plugin interface: it is handed to the function registered as ``NAMESPACE`` in the
group ``conformance.platform_namespaces`` (a bridge, such as
``conformance.bridges.vllm``), which finds it there and answers with its
``PluginEntry``. Loading the bridge only for such names keeps the kit free of the other
engine everywhere else.

Rule ``platform.discovery.entry_point``: the entry point is a zero-argument function
returning the qualified name (a str) of the Platform subclass under test.

Rule ``platform.discovery.idempotent``: calling the entry point again returns the same
answer: engines call it more than once, in more than one process.

Rule ``platform.discovery.no_device_init``: loading the entry point and importing the
platform class initialise no device runtime: every lazily initialised torch runtime
(``torch.cuda``, ``torch.xpu``, ...) whose ``is_initialized()`` was False is still
False afterwards, since discovery runs in every process, including ones that must
fork safely.
"""

from __future__ import annotations

import dataclasses
import difflib
import pkgutil
from importlib import metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # finding a plugin by name needs no torch: a bad name is refused at once
    from conformance.contract.platform import Platform

ENTRY_POINT_GROUP = "conformance.platform_plugins"
NAMESPACE_GROUP = "conformance.platform_namespaces"


class PlatformPluginError(Exception):
    """A platform plugin could not be found, loaded or resolved (one-line message)."""


@dataclasses.dataclass(frozen=True)
class PluginEntry:
    """One installed platform plugin: its entry point and the distribution shipping it."""

    name: str
    value: str
    distribution: str
    version: str
    entry_point: metadata.EntryPoint
    #: For a plugin reached through a bridge: the interface it was written for, its
    #: installed version, the versions the bridge supports and the range of them the
    #: run falls in, with its mustpass profile, the suites the bridge maps (collected
    #: when ``--suite`` is not given) and those it cannot map, with why
    #: (``{"interface": "vllm", "version": "0.32.0", "supported_versions":
    #: ">=0.32.0,<0.33", "supported_range": ">=0.32.0,<0.33", "profile": "vllm",
    #: "suites": [...], "not_supported_suites": {"worker": why}}``);
    #: None for a plugin of this kit.
    bridge: dict | None = None

    def describe(self) -> str:
        return f"{self.name} [{self.distribution} {self.version}]"


def _scan() -> tuple[dict[str, PluginEntry], dict[str, list[PluginEntry]]]:
    """Installed plugins by name, and the names that more than one distribution claims."""
    found: dict[str, PluginEntry] = {}
    clashes: dict[str, list[PluginEntry]] = {}
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = entry_point.dist
        entry = PluginEntry(
            name=entry_point.name,
            value=entry_point.value,
            distribution=dist.metadata["Name"] if dist else "<unknown distribution>",
            version=dist.version if dist else "?",
            entry_point=entry_point,
        )
        previous = found.setdefault(entry.name, entry)
        # The same distribution can be visible twice on sys.path; that is no clash.
        if (previous.distribution, previous.value) != (entry.distribution, entry.value):
            clashes.setdefault(entry.name, [previous]).append(entry)
    return dict(sorted(found.items())), clashes


def installed_plugins() -> dict[str, PluginEntry]:
    """Every installed platform plugin by name (the first one seen, for a name that
    several distributions register; ``find_plugin`` refuses those)."""
    return _scan()[0]


def find_plugin(name: str) -> PluginEntry:
    """The installed plugin called ``name``, or a one-line error: listing what is
    installed when nothing is called ``name``, or naming every distribution that
    registers it when several do (which one wins would depend on ``sys.path``
    order, so the kit refuses to guess). ``NAMESPACE:NAME`` asks that namespace's
    bridge."""
    namespace, colon, bridged_name = name.partition(":")
    if colon:
        return _find_bridged_plugin(namespace, bridged_name)
    plugins, clashes = _scan()
    if name in clashes:
        claims = " and ".join(f"{e.distribution} {e.version} ({e.value})" for e in clashes[name])
        raise PlatformPluginError(
            f"platform plugin name {name!r} is registered by more than one "
            f"distribution: {claims}; uninstall all but one"
        )
    if name not in plugins:
        installed = ", ".join(p.describe() for p in plugins.values()) or "none"
        close = difflib.get_close_matches(name, list(plugins), n=1, cutoff=0.75)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise PlatformPluginError(
            f"no platform plugin named {name!r} is installed ({hint}installed: {installed})"
        )
    return plugins[name]


def _find_bridged_plugin(namespace: str, name: str) -> PluginEntry:
    bridges = {e.name: e for e in metadata.entry_points(group=NAMESPACE_GROUP)}
    if namespace not in bridges:
        known = ", ".join(sorted(bridges)) or "none"
        raise PlatformPluginError(
            f"no bridge for the platform namespace {namespace!r} is installed "
            f"(installed namespaces: {known})"
        )
    bridge = bridges[namespace]
    try:
        entry = bridge.load()(name)
    except PlatformPluginError:
        raise
    except Exception as exc:
        raise PlatformPluginError(
            f"the {namespace!r} bridge ({bridge.value}) failed to find {name!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(entry, PluginEntry):
        raise PlatformPluginError(
            f"the {namespace!r} bridge ({bridge.value}) returned {entry!r} for {name!r}, "
            "not a PluginEntry"
        )
    return entry


def call_plugin_function(entry: PluginEntry) -> str | None:
    """Load the entry point and call it; return what it returned, unchecked."""
    try:
        function = entry.entry_point.load()
        return function()
    except Exception as exc:
        raise PlatformPluginError(
            f"platform plugin {entry.describe()} failed in its entry point "
            f"{entry.value}: {type(exc).__name__}: {exc}"
        ) from exc


def resolve_platform_class(entry: PluginEntry, qualname: object) -> type[Platform]:
    """Check what a plugin function returned and import the class it names."""
    from conformance.contract.platform import Platform

    if qualname is None:
        raise PlatformPluginError(
            f"platform plugin {entry.describe()} reports that its device is not "
            "usable on this machine (its entry point returned None)"
        )
    if not isinstance(qualname, str):
        raise PlatformPluginError(
            f"platform plugin {entry.describe()} returned {qualname!r} "
            f"({type(qualname).__name__}); it must return a qualified class name (str)"
        )
    try:
        cls = pkgutil.resolve_name(qualname)
    except Exception as exc:
        raise PlatformPluginError(
            f"platform plugin {entry.describe()} names {qualname!r}, which does not "
            f"import: {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, Platform)):
        raise PlatformPluginError(
            f"platform plugin {entry.describe()} names {qualname!r}, which is not a "
            "subclass of conformance.Platform"
        )
    if getattr(cls, "__abstractmethods__", None):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise PlatformPluginError(
            f"platform plugin {entry.describe()}: {qualname} does not implement {missing}"
        )
    return cls


def load_platform(name: str) -> type[Platform]:
    """Find, load and resolve the platform plugin called ``name``."""
    entry = find_plugin(name)
    return resolve_platform_class(entry, call_plugin_function(entry))
