"""`conformance run --shard K/N`: the spec is checked in one line, every test lands in
exactly one shard by its node id alone, and the id is read relative to the suites'
folder, so jobs whose pytest chose different root folders still agree."""

from __future__ import annotations

from pathlib import Path

import pytest
from ci_helpers import conformance

from conformance.pytest_plugin.collection import suites_root
from conformance.pytest_plugin.sharding import stable_node_id
from conformance.results.sharding import ShardError, parse_shard, shard_in_command_line, shard_of

NODE_IDS = [f"platform/test_area_{i % 7}.py::test_rule_{i}[case{i % 3}]" for i in range(1000)]


@pytest.mark.parametrize("spec, parsed", [("1/1", (1, 1)), ("2/3", (2, 3)), ("9999/9999", (9999, 9999))])
def test_a_shard_spec_is_k_of_n(spec, parsed):
    assert parse_shard(spec) == parsed


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1/0", "a/b", "1/2/3", " 1/2", "1/10000", "½/2", ""])
def test_a_bad_shard_spec_is_one_line_naming_it(spec):
    with pytest.raises(ShardError) as raised:
        parse_shard(spec)
    assert f"--shard {spec!r} must be K/N" in str(raised.value) and "\n" not in str(raised.value)


def test_the_run_command_refuses_a_bad_shard_before_running_anything(tmp_path):
    result = conformance("run", "--platform", "cpu", "--shard", "3/2", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "conformance run: --shard '3/2' must be K/N with 1 <= K <= N <= 9999, e.g. 1/2\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_every_test_lands_in_exactly_one_shard_the_same_each_time(count):
    shards = [shard_of(node_id, count) for node_id in NODE_IDS]
    assert all(1 <= shard <= count for shard in shards)
    assert shards == [shard_of(node_id, count) for node_id in reversed(NODE_IDS)][::-1]
    sizes = [shards.count(shard) for shard in range(1, count + 1)]
    assert min(sizes) > len(NODE_IDS) / count * 0.8, sizes  # no shard left nearly empty


def test_a_record_names_its_shard_in_its_command_line():
    assert shard_in_command_line(["conformance", "run", "--shard", "2/4"]) == (2, 4)
    assert shard_in_command_line(["conformance", "run", "--shard=1/2"]) == (1, 2)
    assert shard_in_command_line(["conformance", "run", "--record", "x"]) is None
    with pytest.raises(ShardError):
        shard_in_command_line(["conformance", "run", "--shard", "5/4"])


class _Item:
    """What the shard rule reads of a collected test: its path and node id."""

    def __init__(self, path: Path, nodeid: str):
        self.path, self.nodeid = path, nodeid


def test_the_node_id_is_read_relative_to_the_suites_whatever_the_root_folder():
    module = suites_root() / "platform" / "test_identity.py"
    from_repo = _Item(module, "conformance/suites/platform/test_identity.py::test_x[a]")
    from_site = _Item(module, "site-packages/conformance/suites/platform/test_identity.py::test_x[a]")
    assert stable_node_id(from_repo) == stable_node_id(from_site) == "platform/test_identity.py::test_x[a]"
