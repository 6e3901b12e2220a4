"""The vendored Buildkite schema is the recorded upstream copy, with its licence."""

from __future__ import annotations

import hashlib
import re
from importlib import resources

PACKAGE = resources.files("conformance.ci")


def test_the_schema_has_the_hash_its_note_records():
    note = (PACKAGE / "BUILDKITE_SCHEMA.md").read_text()
    recorded = re.search(r"\| sha256 \| `([0-9a-f]{64})` \|", note).group(1)
    assert hashlib.sha256((PACKAGE / "buildkite_schema.json").read_bytes()).hexdigest() == recorded


def test_the_licence_travels_with_it():
    licence = (PACKAGE / "buildkite_schema.LICENSE").read_text()
    assert licence.startswith("MIT License") and "Copyright (c) 2018 Buildkite" in licence
