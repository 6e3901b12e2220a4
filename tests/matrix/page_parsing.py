"""Reading generated pages back with the standard library's HTML parser."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path


class Elements(HTMLParser):
    """Every start tag of a page, as (tag, attributes), and the page's text."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def having(self, tag: str, attribute: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.elements if t == tag and attribute in attrs]


def parse_page(path: Path) -> Elements:
    parser = Elements()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser
