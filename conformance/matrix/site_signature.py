"""The collector signs what it publishes: a signature over the site's ``matrix.json``.

``matrix.json`` holds every verdict, trust level and rejection the pages show, and
names each platform's file (its cells and history) with the file's sha256, so one
Ed25519 signature over it (``matrix.json.sig``, a signature block as a record
carries) says who built the published matrix; ``conformance matrix verify-site``
checks it against a keyring (``allowed_signers``) and checks each platform file
against its digest, so any edit to either after signing fails it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from conformance.results import signing

SIGNATURE_NAME = "matrix.json.sig"
_PLATFORM_FILE = re.compile(r"platforms/[a-z0-9-]+\.json")


def sign_site(site: str | os.PathLike, key_path: str | os.PathLike, signer: str) -> str:
    """Write ``matrix.json.sig`` into ``site``; the line to print."""
    site, key = Path(site), signing.load_signing_key(key_path)
    block = signing.sign_bytes(signing.SITE_DOMAIN + (site / "matrix.json").read_bytes(), key, signer)
    (site / SIGNATURE_NAME).write_text(json.dumps(block, indent=1) + "\n", encoding="utf-8")
    return f"signed {site / 'matrix.json'} as {signer} ({signing.fingerprint(key.public_key())})"


def check_site(site: str | os.PathLike, keyring_path: str | os.PathLike) -> str:
    """Who signed the site's ``matrix.json`` (one line), or ``SigningError``."""
    site, keyring = Path(site), signing.load_keyring(keyring_path)
    try:
        matrix = (site / "matrix.json").read_bytes()
        block = json.loads((site / SIGNATURE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise signing.SigningError(f"{site}: no readable matrix.json and {SIGNATURE_NAME} ({exc})") from None
    if not isinstance(block, dict) or not all(isinstance(block.get(f), str)
                                               for f in ("signer", "public_key", "value")):
        raise signing.SigningError(f"{site / SIGNATURE_NAME}: not a signature block "
                                   "(signer, public_key, value)")
    trust, problem = signing.check_bytes(signing.SITE_DOMAIN + matrix, block, keyring, None, "matrix.json")
    if problem:
        raise signing.SigningError(f"{site / SIGNATURE_NAME}: {problem}")
    for column in json.loads(matrix).get("columns", []):
        _check_platform_file(site, column)
    return f"{site / 'matrix.json'}: signed by {trust.signer} ({trust.key})"


def _check_platform_file(site: Path, column: object) -> None:
    """A platform file named by the signed ``matrix.json`` must hold what it says."""
    name = column.get("file") if isinstance(column, dict) else None
    if not isinstance(name, str) or not _PLATFORM_FILE.fullmatch(name):
        raise signing.SigningError(f"{site / 'matrix.json'}: a column names no platform file of the site")
    try:
        digest = hashlib.sha256((site / name).read_bytes()).hexdigest()
    except OSError as exc:
        raise signing.SigningError(f"{site / name}: unreadable ({exc.strerror})") from None
    if digest != column.get("sha256"):
        raise signing.SigningError(f"{site / name}: does not match the digest the signed matrix.json gives it")
