"""Names that would confuse a reader of the matrix, across the submitted records.

Each record's names are valid on their own (``conformance.results.identity``); here
the review bot looks at them together. Two different names that read alike
(``identity.skeleton``: case, compatibility forms and Unicode confusables folded) are
refused with both named, for plugins, distributions, and devices of one plugin. And a
plugin name belongs to one distribution: that of its earliest vendor-signed record,
or, where none is signed, of its earliest record. Another distribution's record under
that name is refused, so no one can submit a column in another vendor's name, and a
backdated unsigned record cannot take a name from a vendor who signs.
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.matrix.sources import Accepted
from conformance.results import signing
from conformance.results.identity import shown, skeleton


def name_problems(records: list[Accepted]) -> list[str]:
    """One line per look-alike pair of names, and per record under a plugin name
    another distribution owns."""
    ordered = sorted(records, key=lambda r: (r.started, str(r.path)))
    problems = _look_alikes(ordered, "plugin", lambda r: r.provenance["plugin"]["name"])
    problems += _look_alikes(ordered, "distribution", lambda r: r.provenance["plugin"]["distribution"])
    problems += _look_alikes(ordered, "device", lambda r: r.provenance["device"]["name"],
                             scope=lambda r: skeleton(r.provenance["plugin"]["name"]))
    by_claim = sorted(ordered, key=lambda r: r.trust.level != signing.VENDOR)  # stable: then by time
    return problems + _foreign_distributions(by_claim)


def _look_alikes(records: list[Accepted], kind: str, name_of: Callable[[Accepted], str],
                 scope: Callable[[Accepted], str] = lambda r: "") -> list[str]:
    first_by_name: dict[str, Accepted] = {}
    seen: dict[tuple[str, str], Accepted] = {}  # (scope, skeleton) -> first record
    problems = []
    for record in records:
        name = name_of(record)
        if name in first_by_name:
            continue
        first_by_name[name] = record
        key = (scope(record), skeleton(name))
        other = seen.setdefault(key, record)
        if other is not record:
            problems.append(f"{record.path}: {kind} name {shown(name)} reads like {shown(name_of(other))} "
                            f"of {other.path}: two columns a reader cannot tell apart")
    return problems


def _foreign_distributions(records: list[Accepted]) -> list[str]:
    """``records`` in the order they claim names: the first under a name owns it."""
    owners: dict[str, Accepted] = {}
    problems = []
    for record in records:
        plugin = record.provenance["plugin"]
        owner = owners.setdefault(skeleton(plugin["name"]), record)
        owned_by = owner.provenance["plugin"]["distribution"]
        if skeleton(owned_by) != skeleton(plugin["distribution"]):
            problems.append(
                f"{record.path}: plugin name {shown(plugin['name'])} belongs to distribution "
                f"{shown(owned_by)} (its first record: {owner.path}); distribution "
                f"{shown(plugin['distribution'])} may not submit under it")
    return problems
