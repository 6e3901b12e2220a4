"""The names a record is known by, and when two of them are one name to a reader.

A matrix column is keyed by (distribution, plugin name, device name), and people tell
columns apart by reading those names, so a name must read as what it is:

- it is Unicode NFC text of 1 to ``MAX_NAME_LENGTH`` characters, with no leading,
  trailing or doubled space and no whitespace but the plain space;
- it holds no control, format (bidirectional overrides and isolates, zero-width
  characters), private-use, unassigned, surrogate or line/paragraph-separator
  character, and no default-ignorable code point: each can make two different names
  render alike, or one render as another (``acme\\u202egpu`` displays as "acmeupg").

Two valid names still collide when their ``skeleton`` is the same: NFKC-folded
case-insensitively, then each character replaced by the representative of its class
in Unicode's confusables table (UTS #39, as the ``confusable_homoglyphs`` package
ships it), so ``cpu``, ``CPU`` and ``срu`` (Cyrillic) share one. The table's
multi-character confusables (``rn`` for ``m``) are not folded.
"""

from __future__ import annotations

import functools
import unicodedata

#: The longest name a record may give a plugin, distribution or device: longer ones
#: are no one's real name and only stretch a column.
MAX_NAME_LENGTH = 100

#: The fields that name a record's column, and the others its header shows (path
#: shown in messages, getter).
NAME_FIELDS = (
    ("provenance/plugin/distribution", lambda p: p["plugin"]["distribution"]),
    ("provenance/plugin/name", lambda p: p["plugin"]["name"]),
    ("provenance/device/name", lambda p: p["device"]["name"]),
    ("provenance/plugin/version", lambda p: p["plugin"]["version"]),
    ("provenance/host/hostname", lambda p: p["host"]["hostname"]),
    ("provenance/host/os", lambda p: p["host"]["os"]),
    ("provenance/host/machine", lambda p: p["host"]["machine"]),
)

#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt);
#: Python's unicodedata does not expose the property.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

#: General categories a name may not hold: control, format, surrogate, private use,
#: unassigned, line and paragraph separators.
_REFUSED_CATEGORIES = {"Cc": "a control", "Cf": "a format (invisible or bidirectional)",
                       "Cs": "a surrogate", "Co": "a private-use", "Cn": "an unassigned",
                       "Zl": "a line-separator", "Zp": "a paragraph-separator"}


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a column (None when it can)."""
    if not name:
        return "is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long, over the {MAX_NAME_LENGTH}-character limit"
    # Printable ASCII holds none of the characters below (a matrix build checks seven
    # names a record, and this loop was most of that), so only other text is walked.
    if not (name.isascii() and name.isprintable()):
        for character in name:
            point = ord(character)
            category = unicodedata.category(character)
            if category in _REFUSED_CATEGORIES:
                return f"holds {_REFUSED_CATEGORIES[category]} character U+{point:04X}"
            if any(low <= point <= high for low, high in _DEFAULT_IGNORABLE):
                return f"holds the default-ignorable character U+{point:04X}"
            if character.isspace() and character != " ":
                return f"holds the whitespace character U+{point:04X} (only a plain space may separate words)"
    if name != name.strip() or "  " in name:
        return "has leading, trailing or doubled spaces, which make a look-alike of another name"
    if unicodedata.normalize("NFC", name) != name:
        return "is not in Unicode NFC form"
    return None


def name_problems(provenance: dict) -> list[str]:
    """One line per name field of a (schema-valid) record's provenance that is refused."""
    return [f"{field}: {shown(get(provenance))} {problem}" for field, get in NAME_FIELDS
            if (problem := name_problem(get(provenance)))]


def skeleton(name: str) -> str:
    """What ``name`` reads as: equal skeletons are names a reader can mistake."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    representative = _representatives()
    return "".join(representative.get(character, character) for character in folded)


@functools.cache
def _representatives() -> dict[str, str]:
    """Each confusable character -> the smallest code point of its class (the classes
    are the connected groups of the table's single-character pairs)."""
    # Imported here: loading the table takes about 80 ms, which only the review bot's
    # cross-record check needs, not every `conformance verify`.
    from confusable_homoglyphs import confusables

    parent: dict[str, str] = {}

    def find(character: str) -> str:
        while parent.setdefault(character, character) != character:
            parent[character] = parent[parent[character]]
            character = parent[character]
        return character

    for character, homoglyphs in confusables.confusables_data.items():
        for homoglyph in homoglyphs:
            if len(character) == 1 and len(homoglyph["c"]) == 1:
                first, second = find(character), find(homoglyph["c"])
                if first != second:
                    parent[max(first, second)] = min(first, second)
    return {character: find(character) for character in parent}


def shown(name: str) -> str:
    """A name as messages quote it: ``ascii`` escapes make the invisible visible."""
    text = ascii(name)
    return text if len(text) <= 80 else text[:77] + "..."
