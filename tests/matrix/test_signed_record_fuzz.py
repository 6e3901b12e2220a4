"""Hypothesis mutates a valid signed record (edits, deletions, type changes, unicode in
strings, timestamps, keys added): `verify` and the matrix's reader never raise, and
the result is signed-CONFORMANT only when the record is unchanged."""

from __future__ import annotations

import datetime
import json
import re
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from generated_records import make_record, write_record
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scenario import CONTRACTS, NOW
from signing_keys import write_keyring

from conformance.matrix.kits import KnownKits, installed_kit
from conformance.matrix.sources import load_records
from conformance.results import signing
from conformance.results.verify import CONFORMANT, Checking, verify_loaded, verify_record

KEY = Ed25519PrivateKey.generate()
RECORD = signing.sign_record(make_record(
    {**{c: "passed" for c in CONTRACTS}, CONTRACTS[1]: "not_supported"}, plugin="npu",
    device="NPU-9", distribution="acme-npu",
    ci={"provider": "buildkite", "build_url": "https://buildkite.example/b/1"}), KEY, "acme")
KEYRING_FOLDER = Path(tempfile.mkdtemp(prefix="fuzz-keyring-"))
KEYRING = signing.load_keyring(write_keyring(KEYRING_FOLDER, ("acme", KEY)))
CHECKING = Checking(now=NOW, vendor_keyring=KEYRING)
KITS = KnownKits(installed_kit(), (installed_kit(),))


def paths(value, prefix=()) -> list[tuple]:
    """Every path into ``value``: dict keys and list indices."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


PATHS = [p for p in paths(RECORD) if p]
#: The signed-over parts readers look at most: sampled more often than one test's fields.
HOT = [p for p in PATHS if p[0] in ("provenance", "signature", "contracts", "summary") or p[:2] == ("tests", 0)]

timestamps = st.one_of(
    st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
    st.datetimes().map(lambda d: d.isoformat()),  # no zone
    st.sampled_from(["yesterday", "2099-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-20",
                     "2026-11-20T10:00:00+25:00", "2026-11-20T10:00:00.1234567891Z", ""]),
)
unicode_text = st.text(st.characters(codec=None, categories=None), max_size=30) | st.sampled_from(
    ["npu\u200b", "acme\u202egpu", "NPU-9 ", "\ud800", "\x00", "ｎｐｕ", "\u0441\u0440u"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | unicode_text | timestamps,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(unicode_text, inner, max_size=3),
    max_leaves=6)


@st.composite
def mutations(draw):
    """One edit: (path, action, value)."""
    path = draw(st.sampled_from(HOT) | st.sampled_from(PATHS))
    action = draw(st.sampled_from(["replace", "delete", "add_key", "same_type", "timestamp"]))
    if action == "same_type":
        value = _same_type(_at(RECORD, path), draw)
    else:
        value = draw(timestamps if action == "timestamp" else json_values)
    return path, action, value, draw(unicode_text)


def _at(record, path):
    for step in path:
        record = record[step]
    return record


def _same_type(current, draw):
    """An edit that keeps the JSON type, so more edits pass the schema and reach the
    signature check: another string (any unicode), number or boolean."""
    if isinstance(current, bool):
        return not current
    if isinstance(current, int):
        return draw(st.integers(min_value=0))
    if isinstance(current, float):
        return draw(st.floats(min_value=0, allow_nan=False, allow_infinity=False))
    if isinstance(current, str):
        return draw(unicode_text)
    return current


def mutate(record: dict, path: tuple, action: str, value, new_key: str) -> dict:
    record = json.loads(json.dumps(record))
    parent = record
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "add_key":
        target = parent[last]
        if isinstance(target, dict):
            target[new_key] = value
        else:
            parent[last] = {new_key: value}
    else:
        parent[last] = value
    return record


def signed_conformant(verdict) -> bool:
    return verdict.exit_code == CONFORMANT and verdict.trust is not None and \
        verdict.trust.level == signing.VENDOR


def test_the_unchanged_record_is_signed_conformant():
    assert signed_conformant(verify_loaded(RECORD, "r.json", CHECKING))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutations(), min_size=1, max_size=3))
def test_a_mutated_signed_record_never_crashes_and_is_signed_conformant_only_unchanged(edits):
    record = RECORD
    for edit in edits:
        try:
            record = mutate(record, *edit)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or retyped this path
    verdict = verify_loaded(record, "r.json", CHECKING)
    assert "\n" not in verdict.line
    # For --hypothesis-show-statistics: the verdict, and the record part its line names first.
    named = verdict.line.split(": ", 2)[-1]
    event(f"{verdict.exit_code.name}: {re.split(r'[/: ]', named, maxsplit=1)[0]}")
    if signed_conformant(verdict):
        assert record == RECORD, verdict.line


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_the_matrix_reader_and_verify_read_a_mutated_file_without_crashing(edit):
    try:
        record = mutate(RECORD, *edit)
    except (KeyError, IndexError, TypeError):
        record = RECORD
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_keyring(folder / "npu", ("acme", KEY))
        path = write_record(folder, "npu/npu.record.json", record)
        verdict = verify_record(path, CHECKING)
        accepted, rejected = load_records([folder], KITS, NOW)
    assert "\n" not in verdict.line
    assert len(accepted) + len(rejected) == 1
    assert all("\n" not in r.reason for r in rejected)
    if accepted and accepted[0].trust.level == signing.VENDOR and accepted[0].verdict == "CONFORMANT":
        assert record == RECORD


def test_the_fuzzed_timestamps_include_the_edge_cases():
    assert datetime.datetime.fromisoformat(RECORD["provenance"]["started_at"]) < NOW
