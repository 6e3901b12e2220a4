"""The contract's drift between two snapshots, and what a plugin must change."""

from __future__ import annotations

import io
import json
import shutil
import textwrap

import pytest

from conformance.tiers import drift, interface

BEFORE = '''
"""A contract module."""
import abc


class Board(abc.ABC):
    """A board.

    Rule ``board.identity.name``: ``name`` is short.
    """

    name: str
    speed: int = 1

    @classmethod
    @abc.abstractmethod
    def reset(cls) -> None:
        """Reset it. Rule: must not raise."""

    @classmethod
    def old_probe(cls) -> bool:
        """Probe it."""
        return True

    @classmethod
    def read(cls, address: int) -> bytes:
        """Read."""
        return b""
'''

AFTER = '''
"""A contract module."""
import abc


class Board(abc.ABC):
    """A board.

    Rule ``board.identity.name``: ``name`` is short and printable.
    """

    name: str
    speed: int = 1
    lanes: int

    @classmethod
    @abc.abstractmethod
    def reset(cls) -> None:
        """Reset it. Rule: must not raise."""

    @classmethod
    @abc.abstractmethod
    def flush(cls, stream: int = 0) -> None:
        """Flush it."""

    @classmethod
    def read(cls, address: int, size: int) -> bytes:
        """Read."""
        return b""
'''


def snapshot_of(tmp_path, name, source):
    root = tmp_path / name
    root.mkdir()
    (root / "board.py").write_text(textwrap.dedent(source))
    return interface.snapshot(root)


def test_an_added_and_a_removed_method_and_what_a_plugin_must_do(tmp_path):
    """Rule: the report names an added abstract method (implement it), a removed one
    (drop the override), a changed signature (update it), a new attribute without a
    default (set it) and a reworded rule (re-read it); unchanged names are not listed."""
    before, after = snapshot_of(tmp_path, "a", BEFORE), snapshot_of(tmp_path, "b", AFTER)
    changes = {c.name: c for c in drift.compare(before, after)}
    assert set(changes) == {"board.Board", "board.Board.flush", "board.Board.old_probe",
                            "board.Board.read", "board.Board.lanes"}
    assert changes["board.Board.flush"].change == "added"
    assert changes["board.Board.old_probe"].change == "removed"
    assert changes["board.Board.read"].fields == (
        ("signature", "(cls, address: int) -> bytes", "(cls, address: int, size: int) -> bytes"),)
    assert changes["board.Board"].rules_added == ("Rule ``board.identity.name``: ``name`` is short and printable.",)
    todo = drift.checklist(list(changes.values()), before, after)
    assert todo == [
        "re-read the rules of board.Board and rerun board.identity.name: 1 new or reworded, 1 gone or reworded",
        "implement board.Board.flush(cls, stream: int=0) -> None: it is new and abstract",
        "set board.Board.lanes (int): it is new and has no default",
        "board.Board.old_probe is gone: drop your override or use of it",
        "update your override or calls of board.Board.read to (cls, address: int, size: int) -> bytes "
        "(was (cls, address: int) -> bytes)",
    ]


def test_a_method_made_abstract_must_be_implemented(tmp_path):
    """Rule: a method that gains @abstractmethod is on the plugin's list."""
    before = snapshot_of(tmp_path, "a", BEFORE)
    after = snapshot_of(tmp_path, "b", BEFORE.replace(
        "    @classmethod\n    def old_probe", "    @classmethod\n    @abc.abstractmethod\n    def old_probe"))
    (change,) = drift.compare(before, after)
    assert drift.checklist([change], before, after) == ["implement board.Board.old_probe: it is now abstract"]


def test_a_new_class_asks_nothing_of_a_plugin(tmp_path):
    """Rule: a new class's abstract methods and fields are listed as added, and ask
    nothing of a plugin, which cannot yet subclass it."""
    before = snapshot_of(tmp_path, "a", BEFORE)
    after = snapshot_of(tmp_path, "b", BEFORE.replace("class Board(", "class Panel(abc.ABC):\n"
                                                      "    width: int\n\n"
                                                      "    @abc.abstractmethod\n"
                                                      "    def draw(self) -> None: ...\n\n\nclass Board("))
    changes = drift.compare(before, after)
    assert [(c.name, c.change) for c in changes] == [
        ("board.Panel", "added"), ("board.Panel.draw", "added"), ("board.Panel.width", "added")]
    assert drift.checklist(changes, before, after) == []


def test_the_kept_releases_show_the_rule_changed_in_kit_0_1_1():
    """Rule: the snapshots the kit keeps are read by version; between 0.1.0 and 0.1.1
    one rule changed (manual_seed_all: another seed, another tensor) and nothing else."""
    changes = drift.compare(drift.load_snapshot("0.1.0").interface, drift.load_snapshot("0.1.1").interface)
    assert [(c.name, c.change) for c in changes] == [("platform.Platform.manual_seed_all", "changed")]
    assert "another seed another tensor" in changes[0].rules_added[0]


def test_the_current_snapshot_reads_the_installed_source():
    """Rule: ``current`` is the installed contract, with the Platform's abstract methods."""
    current = drift.load_snapshot("current").interface
    assert "abc.abstractmethod" in current["platform.Platform.is_available"]["decorators"]
    assert current["platform.Platform.device_type"] == {"kind": "attribute", "annotation": "ClassVar[str]",
                                                        "default": None}


@pytest.mark.parametrize(("content", "reason"), [
    (b"\xff", "not a contract snapshot (UnicodeDecodeError"),
    (b"[1]", "not a contract snapshot (TypeError"),
    (json.dumps({"kit_version": "1", "contract_version": "1", "interface": {"x": 1}}).encode(),
     "its 'interface' is not name -> entry"),
])
def test_a_bad_snapshot_is_one_line(tmp_path, content, reason):
    """Rule: a snapshot file that is not one is refused in one line naming it."""
    path = tmp_path / "snap.json"
    path.write_bytes(content)
    with pytest.raises(drift.DriftError, match="snap.json") as raised:
        drift.load_snapshot(str(path))
    assert reason in str(raised.value) and "\n" not in str(raised.value)


def test_regenerate_keeps_the_current_snapshot(tmp_path, monkeypatch):
    """Rule: ``regenerate --check`` names the current snapshot stale once the contract's
    source changes (here a copy of it, with a method added), and ``regenerate``
    rewrites it to match."""
    from conformance import dev

    contract = tmp_path / "contract"
    shutil.copytree(interface.contract_root(), contract, ignore=shutil.ignore_patterns("__pycache__"))
    stale = tmp_path / "current.json"
    monkeypatch.setattr(interface, "contract_root", lambda: contract)
    monkeypatch.setattr(interface, "CURRENT", stale)
    stale.write_text(interface.current_text())
    (copy,) = [generated for generated in dev.generated_files() if generated.path == stale]
    assert dev.regenerate(check=True, out=io.StringIO(), files=[copy]) == 0

    platform = contract / "platform.py"
    platform.write_text(platform.read_text() + "\n\ndef new_hook(x: int) -> int:\n    return x\n")
    out = io.StringIO()
    assert dev.regenerate(check=True, out=out, files=[copy]) == 1
    assert f"stale: {stale} (made from the plugin contract's source" in out.getvalue()
    assert dev.regenerate(check=False, out=io.StringIO(), files=[copy]) == 0
    assert "platform.new_hook" in json.loads(stale.read_text())["interface"]
