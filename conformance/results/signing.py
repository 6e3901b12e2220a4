"""Who vouches for a record: Ed25519 signatures over its canonical form.

A record's consistency checks catch an edited outcome, never an edited name: anyone
can write a consistent record for any plugin. A signature says who made it. The
signer signs ``canonical_bytes`` of the record (every field but ``signature``, as
JSON with sorted keys, no whitespace and ASCII escapes, after a domain prefix), so any
edit to the parsed record, a renamed plugin or a recomputed roll-up, breaks it.

Keys are Ed25519 (through ``cryptography``), written in OpenSSH's formats so vendors
make and keep them with ``ssh-keygen -t ed25519``: the record carries the signer's
name, the public key (``ssh-ed25519 AAAA...``) and the signature, never a private key.
Whether that key may speak for a column is the keyring's to say: an ``allowed_signers``
file (``PRINCIPAL ssh-ed25519 KEY [comment]`` per line, the layout of OpenSSH's file
without its options) in the vendor's records folder, and one at the top of the records
folder for the CI's key. A record without a signature is self-reported.

The collector signs what it publishes the same way: ``sign_bytes`` over the site's
``matrix.json`` (with another domain prefix, so a signature over one kind of
content can never pass for the other), checked by ``check_bytes``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from conformance.results import reading

SIGNATURE_FIELD = "signature"
_DOMAIN = b"conformance result record, signed form 1\n"
SITE_DOMAIN = b"conformance matrix site, matrix.json, signed form 1\n"
#: Read for an encrypted signing key (OpenSSH's encrypted keys also need ``bcrypt``).
PASSPHRASE_ENV_VAR = "CONFORMANCE_SIGNING_KEY_PASSPHRASE"

#: Trust levels, as the matrix names them.
VENDOR, CI, SELF_REPORTED, UNCHECKED = "vendor", "ci", "self_reported", "unchecked"


class SigningError(Exception):
    """A key or keyring cannot be used; the message names the file and why."""


@dataclasses.dataclass(frozen=True)
class Trust:
    level: str  # VENDOR, CI, SELF_REPORTED, or UNCHECKED (signed, no keyring consulted)
    signer: str | None = None
    key: str | None = None  # the key's SHA256 fingerprint, as ssh-keygen -l prints it

    def label(self) -> str:
        """A few words, as the matrix shows them on a column or a run."""
        if self.level == CI:
            return "built by CI"
        if self.level == SELF_REPORTED:
            return "self-reported"
        return f"signed by {self.signer}" + ("" if self.level == VENDOR else ", key unchecked")

    def describe(self) -> str:
        if self.level == VENDOR:
            return f"signed by {self.signer} ({self.key})"
        if self.level == CI:
            return f"built by CI, signed by {self.signer} ({self.key})"
        if self.level == UNCHECKED:
            return f"signed by {self.signer} ({self.key}), key not checked against a keyring"
        return "self-reported (unsigned)"


@dataclasses.dataclass(frozen=True)
class Keyring:
    """Allowed (principal, raw public key) pairs, and where they were read from."""

    entries: frozenset[tuple[str, bytes]] = frozenset()
    source: str = "no keyring"

    def allows(self, signer: str, key: bytes) -> bool:
        return (signer, key) in self.entries


def canonical_bytes(record: dict) -> bytes:
    """The bytes a signature covers: the whole record except its signature."""
    unsigned = {name: value for name, value in record.items() if name != SIGNATURE_FIELD}
    return _DOMAIN + json.dumps(unsigned, sort_keys=True, separators=(",", ":"),
                                ensure_ascii=True).encode("ascii")


def sign_bytes(message: bytes, key: Ed25519PrivateKey, signer: str) -> dict:
    """A signature block (signer, public key, signature) over ``message``."""
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH).decode()
    return {"signer": signer, "public_key": public,
            "value": base64.b64encode(key.sign(message)).decode()}


def sign_record(record: dict, key: Ed25519PrivateKey, signer: str) -> dict:
    """``record`` with a signature by ``key`` in the name of ``signer``."""
    unsigned = {name: field for name, field in record.items() if name != SIGNATURE_FIELD}
    return {**unsigned, SIGNATURE_FIELD: sign_bytes(canonical_bytes(record), key, signer)}


def sign_file(path: str | os.PathLike, key_path: str | os.PathLike, signer: str) -> str:
    """Sign the record at ``path`` in place (atomically); the line to print."""
    path, key = Path(path), load_signing_key(key_path)
    try:
        _, record = reading.read_record(path)
    except reading.UnreadableRecord as exc:
        raise SigningError(f"cannot sign {path}: {exc}") from None
    problems = reading.schema_problems(record)
    if problems:
        raise SigningError(f"cannot sign {path}: off the record schema: {problems[0]}")
    signed = sign_record(record, key, signer)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(signed, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return f"signed {path} as {signer} ({fingerprint(key.public_key())})"


def load_signing_key(path: str | os.PathLike) -> Ed25519PrivateKey:
    """An Ed25519 private key from an OpenSSH (``ssh-keygen -t ed25519``) or PKCS#8
    PEM file; a passphrase, if any, from ``$CONFORMANCE_SIGNING_KEY_PASSPHRASE``."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SigningError(f"cannot read signing key {path}: {exc.strerror or exc}") from None
    passphrase = os.environ.get(PASSPHRASE_ENV_VAR)
    password = passphrase.encode() if passphrase else None
    try:
        if b"OPENSSH PRIVATE KEY" in data:
            key = serialization.load_ssh_private_key(data, password)
        else:
            key = serialization.load_pem_private_key(data, password)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise SigningError(f"signing key {path} cannot be loaded: {exc} (an encrypted key "
                           f"needs ${PASSPHRASE_ENV_VAR})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"signing key {path} is not an Ed25519 key (ssh-keygen -t ed25519)")
    return key


def load_keyring(path: str | os.PathLike) -> Keyring:
    """The ``allowed_signers`` file at ``path``; an absent file is an empty keyring."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return Keyring(source=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise SigningError(f"cannot read keyring {path}: {exc}") from None
    entries = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        principal, _, key_text = line.strip().partition(" ")
        key = _public_key(key_text.strip())
        if key is None:
            raise SigningError(f"keyring {path}, line {number}: expected "
                               "'PRINCIPAL ssh-ed25519 KEY [comment]'")
        entries.add((principal, _raw(key)))
    return Keyring(frozenset(entries), str(path))


def check_signature(record: dict, vendor: Keyring | None = None,
                    ci: Keyring | None = None) -> tuple[Trust, str | None]:
    """Who vouches for a schema-valid ``record``, and the problem (None if none):
    a signature that does not match the content, or a key neither keyring allows.
    Without keyrings a valid signature is ``UNCHECKED``."""
    signature = record.get(SIGNATURE_FIELD)
    if signature is None:
        return Trust(SELF_REPORTED), None
    trust, problem = check_bytes(canonical_bytes(record), signature, vendor, ci, "record")
    if problem or trust.level != CI:
        return trust, problem
    if not (record["provenance"].get("ci") or {}).get("build_url"):
        return trust, "signature: signed by the CI's key, but names no CI build (provenance/ci/build_url)"
    return trust, None


def check_bytes(message: bytes, signature: dict, vendor: Keyring | None, ci: Keyring | None,
                what: str) -> tuple[Trust, str | None]:
    """Who signed ``message`` with the (schema-valid) ``signature`` block, and the
    problem (None if none); ``what`` names the content in messages."""
    signer = signature["signer"]
    key = _public_key(signature["public_key"])
    if key is None:
        return Trust(SELF_REPORTED), "signature: public_key is not an ssh-ed25519 public key"
    trust = Trust(UNCHECKED, signer, fingerprint(key))
    try:
        key.verify(base64.b64decode(signature["value"], validate=True), message)
    except (InvalidSignature, binascii.Error, ValueError):
        return trust, (f"signature: does not match the {what}'s content (signed by {signer}, "
                       f"{trust.key}): the {what} was changed after it was signed")
    if vendor is None and ci is None:
        return trust, None
    raw = _raw(key)
    if vendor is not None and vendor.allows(signer, raw):
        return dataclasses.replace(trust, level=VENDOR), None
    if ci is not None and ci.allows(signer, raw):
        return dataclasses.replace(trust, level=CI), None
    where = " or ".join(k.source for k in (vendor, ci) if k is not None)
    return trust, f"signature: key {trust.key} of signer {signer!r} is not allowed by {where}"


def fingerprint(key: Ed25519PublicKey) -> str:
    blob = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).split()[1]
    digest = hashlib.sha256(base64.b64decode(blob)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def _public_key(text: str) -> Ed25519PublicKey | None:
    parts = text.split()
    if len(parts) < 2 or parts[0] != "ssh-ed25519":
        return None
    try:
        key = serialization.load_ssh_public_key(" ".join(parts[:2]).encode("ascii"))
    except (ValueError, UnicodeEncodeError, UnsupportedAlgorithm):
        return None
    return key if isinstance(key, Ed25519PublicKey) else None


def _raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
