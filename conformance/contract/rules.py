"""The rules of the plugin contract, read from the docstrings that state them.

A rule is a paragraph of a docstring in this package (a module's, a class's or a
method's) that opens with ``Rule ``CONTRACT_ID``:`` and runs to the next blank line;
the id names the contract of the suites whose tests check it. Each rule is written
there once: the mustpass list, ``conformance contracts``, the plugin guide and the
support matrix quote it, and the kit's own tests hold every id to a contract of the
suites, every contract to at least one rule, and every paragraph that speaks of a rule
to this form (so no rule is stated that nothing checks).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator

_OPENING = re.compile(r"Rule ``(?P<contract>[a-z0-9_]+(?:\.[a-z0-9_]+)+)``: (?P<text>.+)", re.DOTALL)
#: A paragraph that speaks of a rule without naming its contract ("Rule:", "Rules:").
_UNLABELLED = re.compile(r"\bRules?:")


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule of the contract: the contract id that checks it, its text (one line),
    and where it is written (``Platform.manual_seed_all``, ``custom_ops``)."""

    contract: str
    text: str
    where: str


def _documented() -> Iterator[tuple[str, str]]:
    """``(where, docstring)`` of every module of the contract, its classes and their
    own members, in source order."""
    import conformance.contract

    for info in pkgutil.iter_modules(conformance.contract.__path__, "conformance.contract."):
        module = importlib.import_module(info.name)
        short = info.name.rsplit(".", 1)[-1]
        yield short, inspect.getdoc(module) or ""
        for cls in vars(module).values():
            if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            yield cls.__name__, inspect.cleandoc(cls.__doc__ or "")
            for name, member in vars(cls).items():
                function = getattr(member, "__func__", getattr(member, "fget", member))
                if callable(function) and function.__doc__:
                    yield f"{cls.__name__}.{name}", inspect.cleandoc(function.__doc__)


def _paragraphs(docstring: str) -> Iterator[str]:
    for paragraph in re.split(r"\n\s*\n", docstring):
        if paragraph.strip():
            yield " ".join(paragraph.split())


@functools.cache
def rules() -> tuple[Rule, ...]:
    """Every rule of the contract, in the order the contract states them."""
    return tuple(Rule(found["contract"], found["text"], where)
                 for where, docstring in _documented()
                 for paragraph in _paragraphs(docstring)
                 if (found := _OPENING.fullmatch(paragraph)))


def unlabelled() -> list[tuple[str, str]]:
    """``(where, paragraph)`` of every paragraph that states a rule without naming the
    contract that checks it: the rule audit requires there are none."""
    return [(where, paragraph) for where, docstring in _documented()
            for paragraph in _paragraphs(docstring)
            if _UNLABELLED.search(paragraph) and not _OPENING.fullmatch(paragraph)]


def rule_texts() -> dict[str, str]:
    """Each contract id with its rules' text, joined in the order they are stated."""
    texts: dict[str, list[str]] = {}
    for rule in rules():
        texts.setdefault(rule.contract, []).append(rule.text)
    return {contract: " ".join(found) for contract, found in sorted(texts.items())}
