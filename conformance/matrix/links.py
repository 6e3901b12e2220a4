"""Which links from a record may reach a page: absolute http(s) URLs only.

A record is untrusted input, so a ``javascript:`` or ``data:`` link, a relative path
or anything with characters that could end an attribute or a Markdown link is
dropped (the text around it is still shown, escaped, by the renderers).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_UNSAFE = re.compile(r"[\s\"'<>`()\\]")


def safe_link(url: object) -> str | None:
    if not isinstance(url, str) or _UNSAFE.search(url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.hostname else None
