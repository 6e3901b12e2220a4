"""Result records made in Python, for the matrix's tests and benchmark.

Records are built as the pytest plugin builds them: test entries, then the roll-ups
the results package computes from them, so a generated record is valid and verifies
exactly as a real one would; nothing here runs the suites.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.matrix.kits import Kit, installed_kit
from conformance.results import outcomes
from conformance.results.record import SCHEMA_VERSION, capability_coverage, roll_up_contracts

CPU_CAPABILITIES = {
    "dtypes": ["float32", "bfloat16", "float16"], "head_sizes": [64, 128], "block_sizes": [16],
    "kv_cache_dtypes": ["auto"], "max_world_size": 4, "features": ["sliding_window", "tensor_parallel"],
    "model_architectures": ["LlamaForCausalLM"], "quantizations": [],
}


#: The feature each feature contract exercises (as its tests record it).
FEATURE_CONTRACTS = {"attention.features.sliding_window": "sliding_window",
                     "attention.features.logits_soft_cap": "logits_soft_cap",
                     "engine.parallel.tensor_parallel": "tensor_parallel"}


def exercised_by(contract: str, capabilities: object) -> dict[str, list[str]]:
    """What a test of ``contract`` records having computed with: every declared shape
    value for the Attention and Engine suites, and a feature contract's feature."""
    if not isinstance(capabilities, dict) or not contract.startswith(("attention.", "engine.")):
        return {}
    exercised = {kind: [str(v) for v in capabilities.get(kind, [])]
                 for kind in ("dtypes", "head_sizes", "block_sizes", "kv_cache_dtypes")}
    if contract in FEATURE_CONTRACTS:
        exercised["features"] = [FEATURE_CONTRACTS[contract]]
    return exercised


def entry_for(contract: str, outcome: str, message: str = "", index: int = 0,
              duration: float = 0.25, exercised: dict | None = None) -> dict:
    suite, area, name = contract.split(".", 2)
    return {"nodeid": f"conformance/suites/{suite}/test_{area}.py::test_{name}[{index}]",
            "contract": contract, "outcome": outcome, "duration": duration, "message": message,
            "exercised": exercised or {}}


def make_record(results: dict[str, str | list[tuple[str, str]]], *, plugin: str = "cpu",
                device: str = "Test CPU", started: str = "2026-11-20T10:00:00+00:00",
                complete: bool = True, kit: Kit | None = None,
                capabilities: dict | str | None = None, extra: dict | None = None,
                ci: dict | None = None,
                distribution: str = "conformance", version: str = "0.1.0") -> dict:
    """A record whose contracts end as ``results`` says: an outcome per contract, or a
    list of (outcome, message) per test of it."""
    kit = kit or installed_kit()
    capabilities = CPU_CAPABILITIES if capabilities is None else capabilities
    tests = []
    for contract, result in results.items():
        entries = [(result, "")] if isinstance(result, str) else result
        tests += [entry_for(contract, outcome, message, i, exercised=exercised_by(contract, capabilities))
                  for i, (outcome, message) in enumerate(entries)]
    record = {
        "schema_version": SCHEMA_VERSION,
        "complete": complete,
        "exit_status": (0 if all(t["outcome"] == "passed" for t in tests) else 1) if complete else None,
        "provenance": {
            "kit_version": kit.version, "contract_version": kit.contract_version,
            "suite_hash": kit.suite_hash,
            "plugin": {"name": plugin, "distribution": distribution, "version": version,
                       "platform_class": f"{plugin}_plugin.Platform"},
            "device": {"type": "cpu", "name": device, "count": 1, "capability": None,
                       "total_memory": 2**34,
                       "capabilities": capabilities},
            "torch_version": "2.13.0", "python_version": "3.11.7",
            "host": {"hostname": "builder", "os": "Linux", "machine": "x86_64"},
            "command_line": ["conformance", "run", "--platform", plugin],
            "started_at": started,
            "finished_at": started if complete else None,
        },
        "tests": tests,
        "contracts": roll_up_contracts(tests),
        "summary": outcomes.count(t["outcome"] for t in tests),
        "capability_coverage": capability_coverage(tests, capabilities),
    }
    if ci is not None:
        record["provenance"]["ci"] = ci
    record.update(extra or {})
    return record


def write_record(folder: Path, name: str, record: dict) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return path
