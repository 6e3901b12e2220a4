"""A snapshot of the plugin contract's interface, read from its source.

The snapshot lists every public name of ``conformance/contract/`` (modules, classes,
their methods and attributes, functions and constants) with what a plugin author
relies on: a signature, the decorators that make a method a classmethod or abstract,
an attribute's annotation and whether it has a default, a constant's value, and the
rule paragraphs of each docstring (a paragraph that says ``Rule:`` or ``Rule
``ID``:``). It is read with ``ast`` from the files, never by importing them, so it
costs no torch and works on the source of any kit version (a release's files, a git
checkout). ``drift`` compares two snapshots.

``python -m conformance.dev regenerate`` writes the installed contract's snapshot to
``interfaces/current.json``; a release keeps its own as ``interfaces/kit-VERSION.json``.
"""

from __future__ import annotations

import ast
import json
import re
from importlib import resources
from pathlib import Path

INTERFACES = Path(__file__).resolve().parent / "interfaces"
CURRENT = INTERFACES / "current.json"
#: A docstring paragraph that states a rule: "Rule: ..." or "Rule ``contract.id``: ...".
_RULE = re.compile(r"\bRules?\b(?: ``[^`]+``)?:")
_ABOUT = ("The plugin contract's interface (conformance/tiers/interface.py): every public "
          "name with its signature, decorators, annotation or value, and rule paragraphs. "
          "Read by `conformance drift`; generated, never edited by hand.")


def contract_root() -> Path:
    return Path(str(resources.files("conformance.contract")))


def snapshot(root: Path | None = None) -> dict[str, dict]:
    """Qualified name (``platform.Platform.is_available``) -> what it promises, for
    every module of the contract package at ``root`` (the installed one by default)."""
    root = contract_root() if root is None else root
    return snapshot_of_sources({path.stem: path.read_text(encoding="utf-8") for path in sorted(root.glob("*.py"))
                                if path.name != "__init__.py"})  # __init__ only re-exports


def snapshot_of_sources(sources: dict[str, str]) -> dict[str, dict]:
    """The snapshot of modules given as ``{name: source text}`` (any package's: the
    vLLM bridge reads vLLM's plugin interface so)."""
    interface: dict[str, dict] = {}
    for name, source in sources.items():
        module = ast.parse(source, filename=name)
        interface[name] = {"kind": "module", "rules": _rules(module)}
        _members(module.body, name, interface)
    return interface


def _members(body: list[ast.stmt], prefix: str, interface: dict[str, dict]) -> None:
    for node in body:
        if isinstance(node, ast.ClassDef) and _public(node.name):
            name = f"{prefix}.{node.name}"
            interface[name] = {"kind": "class", "bases": [ast.unparse(b) for b in node.bases],
                               "rules": _rules(node)}
            _members(node.body, name, interface)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            interface[f"{prefix}.{node.name}"] = {
                "kind": "function", "signature": _signature(node),
                "decorators": [ast.unparse(d) for d in node.decorator_list], "rules": _rules(node)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and _public(node.target.id):
            interface[f"{prefix}.{node.target.id}"] = {
                "kind": "attribute", "annotation": ast.unparse(node.annotation),
                "default": None if node.value is None else ast.unparse(node.value)}
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and _public(node.targets[0].id):
            interface[f"{prefix}.{node.targets[0].id}"] = {"kind": "attribute", "annotation": None,
                                                           "default": ast.unparse(node.value)}


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__init__"


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"({ast.unparse(node.args)}){returns}"


def _rules(node: ast.AST) -> list[str]:
    """The docstring's rule paragraphs, each on one line."""
    docstring = ast.get_docstring(node) or ""
    paragraphs = (" ".join(p.split()) for p in re.split(r"\n\s*\n", docstring))
    return [p for p in paragraphs if _RULE.search(p)]


def snapshot_document(interface: dict[str, dict], kit_version: str, contract_version: str) -> dict:
    return {"about": _ABOUT, "kit_version": kit_version, "contract_version": contract_version,
            "interface": interface}


def current_text() -> str:
    """``interfaces/current.json`` as it must read for the installed contract."""
    from conformance._version import __version__
    from conformance.contract.version import CONTRACT_VERSION

    document = snapshot_document(snapshot(), __version__, CONTRACT_VERSION)
    return json.dumps(document, indent=1, sort_keys=True) + "\n"
