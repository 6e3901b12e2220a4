"""``examples/acme_npu``: written against the public contract only, and its one
waiver is real (CI runs the whole kit against it: ``.ci/run``)."""

from __future__ import annotations

import ast
import json

from conftest import EXAMPLE

PUBLIC = ("conformance", "conformance.contract")


def _imported_modules(path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append(node.module)
    return found


def test_imports_nothing_of_the_kit_but_the_public_contract():
    sources = sorted(EXAMPLE.rglob("*.py"))
    assert len(sources) >= 5
    private = [(path.name, module) for path in sources for module in _imported_modules(path)
               if module.split(".")[0] == "conformance"
               and not (module in PUBLIC or module.startswith("conformance.contract."))]
    assert private == [], f"the example imports kit internals: {private}"


def test_its_waiver_is_real(kit, install, tmp_path):
    """Rule: the expectations file's waiver matches a test that really fails (recorded
    waived, not an unexpected pass), given as a path outside the run's folder."""
    env = install("acme-npu-plugin", "1.0.0", {"acme_npu": "acme_npu:register"}, EXAMPLE)
    run = kit("run", "--platform", "acme_npu", "--suite", "attention", "--expectations",
              str(EXAMPLE / "expectations.toml"), "--record", "a.json", env=env)
    output = run.stdout + run.stderr
    assert "matches no collected test" not in output, output
    outcomes = {c: r["outcome"] for c, r in json.loads((tmp_path / "a.json").read_text())["contracts"].items()}
    assert outcomes.pop("attention.numerics.fp16_long_context") == "waived", output[-3000:]
    # Declared honestly: what the kernel lacks is not_supported, the rest passes.
    assert outcomes.pop("attention.features.sliding_window") == "not_supported"
    assert outcomes.pop("attention.features.logits_soft_cap") == "not_supported"
    assert set(outcomes.values()) == {"passed"}, outcomes
