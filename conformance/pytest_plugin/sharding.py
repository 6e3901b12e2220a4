"""``conformance run --shard K/N``: this run keeps the tests of shard K of N.

Loaded only for a sharded run (``conformance run`` passes ``-p`` with this module
and ``--conformance-shard``), so an unsharded run is untouched. The split is
``conformance.results.sharding.shard_of`` on a node id made relative to the suites'
folder, so it is the same whatever folder pytest chose as its root.
"""

from __future__ import annotations

import pytest

from conformance.pytest_plugin.collection import suites_root
from conformance.results.sharding import ShardError, parse_shard, shard_of


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--conformance-shard", metavar="K/N",
                     help="run only the tests of shard K of N (1-based)")


def stable_node_id(item: pytest.Item) -> str:
    """The item's node id from the suites' folder on, e.g.
    ``platform/test_identity.py::test_x``, wherever pytest put its root."""
    try:
        relative = item.path.resolve().relative_to(suites_root()).as_posix()
    except ValueError:
        return item.nodeid
    return relative + item.nodeid[item.nodeid.index("::"):] if "::" in item.nodeid else relative


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spec = config.getoption("conformance_shard")
    if not spec:
        return
    try:
        shard, count = parse_shard(spec)
    except ShardError as exc:
        raise pytest.UsageError(str(exc)) from None
    keep = [item for item in items if shard_of(stable_node_id(item), count) == shard]
    dropped = [item for item in items if shard_of(stable_node_id(item), count) != shard]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
