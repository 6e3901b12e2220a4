"""What changed in the plugin contract between two snapshots, and what a plugin must do.

``compare`` lists every name of the contract added, removed or changed (signature,
decorators, annotation, default or value, rule paragraphs) between two snapshots of
``interface``; ``checklist`` turns that into the per-release list a vendor otherwise
writes by hand: methods to implement, overrides to update or drop, rules to re-read.
A snapshot is named by ``current`` (the installed contract's source), a kit version
whose snapshot the kit keeps (``interfaces/kit-VERSION.json``), or a snapshot file.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from conformance.tiers.interface import INTERFACES, snapshot

#: The contract id a rule paragraph names ("Rule ``attention.forward.decode``: ...").
_CONTRACT = re.compile(r"^Rules? ``([a-z0-9_.]+)``:")
#: The fields of an entry that a change can touch, in the order a report lists them.
_FIELDS = ("signature", "decorators", "bases", "annotation", "default")


class DriftError(Exception):
    """A snapshot cannot be found or read; the message says which and why."""


@dataclasses.dataclass(frozen=True)
class Snapshot:
    label: str  # what it was named by, and the versions it records
    interface: dict[str, dict]


@dataclasses.dataclass(frozen=True)
class Change:
    name: str
    kind: str  # module, class, function, attribute
    change: str  # added, removed, changed
    fields: tuple[tuple[str, object, object], ...] = ()  # (field, before, after) of a changed entry
    rules_removed: tuple[str, ...] = ()
    rules_added: tuple[str, ...] = ()


def load_snapshot(name: str) -> Snapshot:
    """The snapshot ``name`` names: ``current``, a kept kit version, or a file."""
    if name == "current":
        return Snapshot("current (the installed contract's source)", snapshot())
    kept = INTERFACES / f"kit-{name}.json"
    path = kept if kept.is_file() else Path(name)
    if not path.is_file():
        known = sorted(p.stem.removeprefix("kit-") for p in INTERFACES.glob("kit-*.json"))
        raise DriftError(f"no contract snapshot {name!r}: give 'current', a kit version the kit "
                         f"keeps ({', '.join(known) or 'none'}) or a snapshot file")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        interface = document["interface"]
        label = f"{name} (kit {document['kit_version']}, contract {document['contract_version']})"
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise DriftError(f"{path}: not a contract snapshot ({type(exc).__name__}: {exc})") from None
    if not isinstance(interface, dict) or not all(isinstance(v, dict) and "kind" in v for v in interface.values()):
        raise DriftError(f"{path}: not a contract snapshot (its 'interface' is not name -> entry)")
    return Snapshot(label, interface)


def kept_versions() -> list[str]:
    return sorted(p.stem.removeprefix("kit-") for p in INTERFACES.glob("kit-*.json"))


def compare(before: dict[str, dict], after: dict[str, dict]) -> list[Change]:
    """Every difference between two interfaces, by qualified name."""
    changes = []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old is None:
            changes.append(Change(name, new["kind"], "added", rules_added=tuple(new.get("rules", ()))))
        elif new is None:
            changes.append(Change(name, old["kind"], "removed", rules_removed=tuple(old.get("rules", ()))))
        else:
            fields = tuple((f, old.get(f), new.get(f)) for f in _FIELDS if old.get(f) != new.get(f))
            if old["kind"] != new["kind"]:
                fields = (("kind", old["kind"], new["kind"]), *fields)
            old_rules, new_rules = old.get("rules", []), new.get("rules", [])
            removed = tuple(r for r in old_rules if r not in new_rules)
            added = tuple(r for r in new_rules if r not in old_rules)
            if fields or removed or added:
                changes.append(Change(name, new["kind"], "changed", fields, removed, added))
    return changes


def checklist(changes: list[Change], before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    """What a plugin must change, one line each, in the order of ``changes``. A new
    member of a new class asks nothing: no plugin subclasses that class yet."""
    todo = []
    for change in changes:
        entry = after.get(change.name, {})
        abstract = any("abstractmethod" in d for d in entry.get("decorators", ()))
        owner_existed = change.name.rsplit(".", 1)[0] in before
        if change.change == "removed" and change.kind in ("function", "attribute"):
            todo.append(f"{change.name} is gone: drop your override or use of it")
        elif change.change == "removed":
            todo.append(f"{change.name} ({change.kind}) is gone: stop importing or subclassing it")
        elif change.change == "added" and change.kind == "function" and abstract and owner_existed:
            todo.append(f"implement {change.name}{entry['signature']}: it is new and abstract")
        elif change.change == "added" and change.kind == "attribute" and entry.get("default") is None \
                and _in_class(change.name, after) and owner_existed:
            todo.append(f"set {change.name} ({entry.get('annotation')}): it is new and has no default")
        changed = dict((field, (old, new)) for field, old, new in change.fields)
        if "signature" in changed:
            todo.append(f"update your override or calls of {change.name} to {changed['signature'][1]} "
                        f"(was {changed['signature'][0]})")
        if "decorators" in changed and abstract and change.change == "changed":
            todo.append(f"implement {change.name}: it is now abstract")
        if change.change == "changed" and (change.rules_added or change.rules_removed):
            contracts = sorted({found for rule in change.rules_added for found in _CONTRACT.findall(rule)})
            rerun = f"rerun {', '.join(contracts)}" if contracts else "rerun the suites"
            todo.append(f"re-read the rules of {change.name} and {rerun}: {len(change.rules_added)} "
                        f"new or reworded, {len(change.rules_removed)} gone or reworded")
    return todo


def _in_class(name: str, interface: dict[str, dict]) -> bool:
    owner = name.rsplit(".", 1)[0]
    return interface.get(owner, {}).get("kind") == "class"


def render(before: Snapshot, after: Snapshot, subject: str = "contract") -> list[str]:
    """The drift report of ``subject`` (the kit's contract, or vLLM's plugin
    interface), as lines of text."""
    changes = compare(before.interface, after.interface)
    lines = [f"{subject} drift from {before.label} to {after.label}: {len(changes)} changes"]
    for change in changes:
        lines.append(f"  {change.change} {change.kind} {change.name}")
        lines += [f"      {field}: {old!r} -> {new!r}" for field, old, new in change.fields]
        lines += [f"      rule gone or reworded: {rule}" for rule in change.rules_removed
                  if change.change == "changed"]
        lines += [f"      rule new or reworded: {rule}" for rule in change.rules_added
                  if change.change == "changed"]
    todo = checklist(changes, before.interface, after.interface)
    lines.append(f"what a plugin must change ({len(todo)}):" if todo else "a plugin need change nothing")
    lines += [f"  - {item}" for item in todo]
    return lines
