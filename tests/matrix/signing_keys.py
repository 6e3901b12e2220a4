"""Throwaway Ed25519 keys for the signing tests: made per test session, never written
anywhere but a test's temporary folder."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def public_line(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                         serialization.PublicFormat.OpenSSH).decode()


def write_keyring(folder: Path, *signers: tuple[str, Ed25519PrivateKey]) -> Path:
    """An ``allowed_signers`` file in ``folder`` allowing each (principal, key)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "allowed_signers"
    path.write_text("# principal key\n" + "".join(f"{name} {public_line(key)} test key\n"
                                                   for name, key in signers))
    return path


def write_private_key(path: Path, key: Ed25519PrivateKey) -> Path:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return path
