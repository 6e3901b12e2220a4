"""Plugin versions by engine and kit release, each with its newest verdict."""

from __future__ import annotations

import dataclasses

from histories import history, key

from conformance.tiers.compatibility import compatibility
from conformance.tiers.report import compatibility_lines


def test_each_combination_has_its_newest_verdict():
    """Rule: one row per (plugin version, engine, kit, contract), newest first, with
    the verdict of its newest record; records no verifier judged are left out."""
    old = history("npu", "NC", days_ago=10, kit="0.1.0")
    new = [dataclasses.replace(r, plugin_version="2.0", engine="vllm 0.32.1",
                               contract_version="0.10") for r in
           history("npu", "CCN", days_ago=1, kit="0.1.10")]
    (rows,) = compatibility(old + new + history("npu", "?", kit="0.9.0")).values()
    assert [(c.plugin_version, c.engine, c.kit_version, c.verdict, c.runs) for c in rows] == [
        ("2.0", "vllm 0.32.1", "0.1.10", "NOT CONFORMANT", 3),
        ("1.0", "conformance 0.1.0", "0.1.0", "CONFORMANT", 2)]
    lines = compatibility_lines({key("npu"): rows})
    assert lines[0] == f"{key('npu')}:"
    assert " 0.10 " in lines[3]  # a version is text, never the number 0.1
