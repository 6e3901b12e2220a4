"""Reading a result record without trusting it.

A record arrives from a vendor's machine, a CI artifact or a pull request, so before
anything looks inside it the reader bounds what it costs: the file must be a regular
file of at most ``MAX_RECORD_BYTES`` (checked before reading, and the read itself is
capped, so a file that grows meanwhile cannot exhaust memory), and must be UTF-8 JSON
that Python's parser can take: one nested deeper than the interpreter's recursion
limit makes it raise RecursionError, which is a refusal here, not a traceback. What
nests less deeply but off the schema's shape is the schema's to refuse, and nothing
that reads a record recurses into the parts the schema leaves open. Every refusal is
one ``UnreadableRecord`` whose text says why, so callers print one line per file.

Schema checks use ``jsonschema_rs``: the Python ``jsonschema`` takes about 70 ms for
a record of 300 tests, too slow for a matrix of a thousand records; both implement
the same JSON Schema draft the shipped schema declares.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
from importlib import resources
from pathlib import Path

import jsonschema_rs

MAX_RECORD_BYTES = 64 * 2**20


class UnreadableRecord(Exception):
    """The file cannot be taken as a record; the message is the reason."""


def read_bytes(path: Path, within: Path | None = None) -> bytes:
    """The file's bytes, refusing what is not a bounded regular file (inside
    ``within`` after resolving symlinks, when given)."""
    if within is not None and not path.resolve().is_relative_to(within.resolve()):
        raise UnreadableRecord(f"a symlink out of {within} (to {path.resolve()})")
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableRecord("not a regular file")
        if info.st_size > MAX_RECORD_BYTES:
            raise UnreadableRecord(f"{info.st_size} bytes, over the {_limit()} limit for a record")
        with open(path, "rb") as file:
            raw = file.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise UnreadableRecord(f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_RECORD_BYTES:
        raise UnreadableRecord(f"grew past the {_limit()} limit for a record while being read")
    return raw


def parse(raw: bytes) -> object:
    """The JSON value in ``raw``, refusing text that is not JSON or nests too deeply."""
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise UnreadableRecord("nested too deeply for a record (past the parser's recursion limit)") from None
    except UnicodeDecodeError as exc:
        raise UnreadableRecord(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise UnreadableRecord(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None


def read_record(path: str | os.PathLike, within: Path | None = None) -> tuple[bytes, object]:
    """The raw bytes and parsed JSON of the record file at ``path``."""
    raw = read_bytes(Path(path), within)
    return raw, parse(raw)


def load_schema() -> dict:
    text = (resources.files("conformance.results") / "record.schema.json").read_text()
    return json.loads(text)


@functools.cache
def _validator() -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(load_schema())


#: A JSON escape of a UTF-16 surrogate, the only way a record read from UTF-8 text can
#: hold one (an escaped backslash before "ud800" matches too, and is then checked).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def schema_problems(record: object, raw: bytes | None = None) -> list[str]:
    """Where ``record`` departs from the record schema, one line per problem. Text
    that is not Unicode (a lone surrogate, which JSON's ``\\ud800`` escape can carry)
    is refused first: the validator and every page written from a record need
    encodable text. ``raw``, the text ``record`` was parsed from, spares that check
    (a third of a large record's reading) when it holds no surrogate escape."""
    if raw is None or _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            return [f"holds a lone surrogate {exc.object[exc.start:exc.end]!a}: not Unicode text"]
    validator = _validator()
    if validator.is_valid(record):  # the usual answer, found without collecting errors
        return []
    return [
        f"{'/'.join(map(str, error.instance_path)) or '<root>'}: {error.message}"
        for error in sorted(validator.iter_errors(record), key=lambda e: list(map(str, e.instance_path)))
    ]


def printable(text: str) -> str:
    """``text`` on one line as it reads: every character that does not print (line
    breaks, controls, bidirectional and other invisible ones) as its escape, so a
    record's text can neither break a one-line message nor reorder it."""
    if text.isprintable():  # the usual case, checked at C speed
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _limit() -> str:
    return f"{MAX_RECORD_BYTES // 2**20} MiB"
