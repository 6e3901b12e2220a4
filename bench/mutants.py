"""Mutants of a Python module: every single-site change of a small set of operators.

A mutant is one change at one place of the module's syntax tree: an arithmetic,
comparison or boolean operator swapped, an integer constant off by one, a boolean
flipped, a negation dropped, or a call made for its effect removed. Each is found by
its position in ``ast.walk`` order, which depends only on the source, so a mutant's
id names the same change on every machine and in every shard.

Docstrings, annotations and imports are left alone: changing them changes nothing a
suite could observe, and would only inflate the count of equivalent mutants.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterator

_BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
           ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
           ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd}
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_BOOLEAN = {ast.And: ast.Or, ast.Or: ast.And}
_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
           ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
           ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and",
           ast.Or: "or"}


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One change: the ``index``-th node of ``ast.walk`` order, at ``line``,
    described as ``what`` (``"> -> >="``)."""

    index: int
    line: int
    what: str


def _changes(node: ast.AST) -> Iterator[tuple[str, Callable[[ast.AST], ast.AST]]]:
    """``(what, apply)`` for each change this node allows; ``apply`` returns the node
    that replaces it (the node itself, changed in place, or a new one)."""
    def swap(attribute: str, table: dict, index: int | None = None):
        old = getattr(node, attribute) if index is None else getattr(node, attribute)[index]
        new = table.get(type(old))
        if new is None:
            return
        def apply(target: ast.AST) -> ast.AST:
            if index is None:
                setattr(target, attribute, new())
            else:
                getattr(target, attribute)[index] = new()
            return target
        yield f"{_SYMBOL[type(old)]} -> {_SYMBOL[new]}", apply

    if isinstance(node, ast.BinOp):
        yield from swap("op", _BINARY)
    elif isinstance(node, ast.AugAssign):
        yield from swap("op", _BINARY)
    elif isinstance(node, ast.Compare):
        for i in range(len(node.ops)):
            yield from swap("ops", _COMPARE, i)
    elif isinstance(node, ast.BoolOp):
        yield from swap("op", _BOOLEAN)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        yield f"{'-' if isinstance(node.op, ast.USub) else 'not '}x -> x", lambda target: target.operand
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield f"{node.value} -> {not node.value}", lambda target: ast.Constant(not target.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield f"{node.value} -> {node.value + 1}", lambda target: ast.Constant(target.value + 1)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield "call removed", lambda target: ast.Pass()


def _untouchable(tree: ast.AST) -> set[int]:
    """ids of the nodes no mutant changes: docstrings, annotations, imports."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            parts.append(node)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str):
            parts.append(node.body[0])
        for field in ("annotation", "returns"):
            if getattr(node, field, None) is not None:
                parts.append(getattr(node, field))
        for part in parts:
            skipped.update(id(n) for n in ast.walk(part))
    return skipped


def _sites(tree: ast.AST) -> Iterator[tuple[int, ast.AST]]:
    skipped = _untouchable(tree)
    for index, node in enumerate(ast.walk(tree)):
        if id(node) not in skipped:
            yield index, node


def mutants_of(source: str) -> list[Mutant]:
    """Every mutant of ``source``, in a fixed order."""
    found = [Mutant(index, getattr(node, "lineno", 0), what)
             for index, node in _sites(ast.parse(source)) for what, _ in _changes(node)]
    return sorted(found, key=lambda mutant: (mutant.line, mutant.index))


def apply(source: str, mutant: Mutant) -> str:
    """``source`` with ``mutant``'s one change made."""
    tree = ast.parse(source)
    for index, node in _sites(tree):
        if index != mutant.index:
            continue
        for what, change in _changes(node):
            if what == mutant.what:
                replacement = change(node)
                if replacement is not node:
                    _replace(tree, node, replacement)
                return ast.unparse(ast.fix_missing_locations(tree))
    raise ValueError(f"no mutant {mutant} in this source")


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, ast.copy_location(new, old))
                return
            if isinstance(value, list) and old in value:  # AST nodes compare by identity
                value[value.index(old)] = ast.copy_location(new, old)
                return
