"""Who vouches for a record: a vendor's signature, the CI's, or no one.

A signature covers the whole record, so an edit that keeps the record consistent (a
renamed plugin, an outcome turned into a pass with its roll-ups recomputed by the
kit's own function) is caught; a record signed by a key its folder's keyring does not
hold is refused; an unsigned one is shown as self-reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import patience
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from generated_records import make_record, write_record
from scenario import CONTRACTS, NOW
from signing_keys import write_keyring, write_private_key

from conformance.matrix.build import build_matrix
from conformance.matrix.check import check_submissions
from conformance.results import outcomes, signing
from conformance.results.record import roll_up_contracts
from conformance.results.verify import CONFORMANT, INVALID, Checking, verify_loaded

ACME = Ed25519PrivateKey.generate()
CI_KEY = Ed25519PrivateKey.generate()
STRANGER = Ed25519PrivateKey.generate()
BUILD = "https://buildkite.example/acme/builds/42"


def conformance(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args],
                          capture_output=True, text=True, timeout=patience.scaled(1800))


def npu_record(**options) -> dict:
    results = {c: "passed" for c in CONTRACTS}
    results["attention.features.logits_soft_cap"] = "not_supported"
    return make_record(results, plugin="npu", device="NPU-9", distribution="acme-npu", **options)


def signed(record: dict, key=ACME, signer: str = "acme") -> dict:
    return signing.sign_record(record, key, signer)


def acme_keyring(tmp_path) -> signing.Keyring:
    return signing.load_keyring(write_keyring(tmp_path / "npu", ("acme", ACME)))


def recomputed(record: dict) -> dict:
    """The record with its roll-ups recomputed by the kit's own functions, as a
    forger who knows the kit would."""
    record["contracts"] = roll_up_contracts(record["tests"])
    record["summary"] = outcomes.count(t["outcome"] for t in record["tests"])
    return record


def test_a_signed_record_verifies_as_signed_by_its_vendor(tmp_path):
    verdict = verify_loaded(signed(npu_record()), "r.json", Checking(vendor_keyring=acme_keyring(tmp_path)))
    assert verdict.exit_code == CONFORMANT
    assert verdict.trust.level == signing.VENDOR and verdict.trust.signer == "acme"
    assert verdict.line.endswith(f"; signed by acme ({signing.fingerprint(ACME.public_key())})")


def rename_plugin(record):
    record["provenance"]["plugin"]["name"] = "gpu"


def rename_everything(record):
    record["provenance"]["plugin"].update(name="other", distribution="other-dist")
    record["provenance"]["device"]["name"] = "Other Device"


def not_supported_to_passed(record):
    for test in record["tests"]:
        if test["outcome"] in ("not_supported", "skipped"):
            test.update(outcome="passed", message="")
    recomputed(record)


def new_suite_hash(record):
    record["provenance"]["suite_hash"] = "sha256:" + "0" * 64


@pytest.mark.parametrize("edit", [rename_plugin, rename_everything, not_supported_to_passed,
                                  lambda r: r["provenance"].update(started_at="2026-11-20T09:00:00+00:00"),
                                  lambda r: r["tests"][0].update(duration=0.5)],
                         ids=["plugin-renamed", "names-renamed", "not-supported-to-passed",
                              "time-moved", "duration-edited"])
def test_any_edit_after_signing_fails_naming_the_signature(tmp_path, edit):
    record = signed(npu_record())
    edit(record)
    verdict = verify_loaded(record, "r.json", Checking(vendor_keyring=acme_keyring(tmp_path)))
    assert verdict.exit_code == INVALID
    assert verdict.line.startswith("INVALID: r.json: signature: does not match the record's content "
                                   "(signed by acme"), verdict.line


def test_a_key_the_folder_does_not_allow_is_refused(tmp_path):
    verdict = verify_loaded(signed(npu_record(), STRANGER), "r.json",
                            Checking(vendor_keyring=acme_keyring(tmp_path)))
    assert verdict.exit_code == INVALID
    assert verdict.line == (f"INVALID: r.json: signature: key {signing.fingerprint(STRANGER.public_key())} "
                            f"of signer 'acme' is not allowed by {tmp_path}/npu/allowed_signers")


def test_without_a_keyring_a_valid_signature_is_reported_unchecked():
    verdict = verify_loaded(signed(npu_record()), "r.json")
    assert verdict.exit_code == CONFORMANT and verdict.trust.level == signing.UNCHECKED
    assert verdict.line.endswith("key not checked against a keyring")


def test_an_unsigned_record_still_verifies_as_self_reported():
    verdict = verify_loaded(npu_record(), "r.json")
    assert verdict.exit_code == CONFORMANT
    assert verdict.line.endswith("; self-reported (unsigned)")


def test_the_signature_holds_no_private_key():
    record = signed(npu_record())
    text = json.dumps(record)
    assert set(record["signature"]) == {"signer", "public_key", "value"}
    assert "PRIVATE" not in text
    from cryptography.hazmat.primitives import serialization
    secret = ACME.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                serialization.NoEncryption())
    assert secret.hex() not in text and secret not in text.encode()


@pytest.fixture
def vouched_folder(tmp_path):
    """A records folder: acme's signed npu record, a CI-built cpu record, an unsigned
    gpu record, and the two keyrings."""
    folder = tmp_path / "records"
    write_keyring(folder, ("ci", CI_KEY))
    write_keyring(folder / "npu", ("acme", ACME))
    write_record(folder, "npu/npu.record.json", signed(npu_record()))
    write_record(folder, "cpu/cpu.record.json", signed(
        make_record({c: "passed" for c in CONTRACTS}, ci={"provider": "buildkite", "build_url": BUILD}),
        CI_KEY, "ci"))
    write_record(folder, "gpu/gpu.record.json", make_record({c: "passed" for c in CONTRACTS},
                                                            plugin="gpu", device="GPU X"))
    return folder


def test_the_matrix_says_who_vouches_for_each_column(vouched_folder):
    built = build_matrix([vouched_folder], now=NOW)
    assert built.matrix.rejected == []
    trust = {c.plugin: (c.trust, c.trust_label) for c in built.matrix.columns}
    assert trust == {"npu": ("vendor", "signed by acme"), "cpu": ("ci", "built by CI"),
                     "gpu": ("self_reported", "self-reported")}
    cpu = next(c for c in built.matrix.columns if c.plugin == "cpu")
    assert cpu.ci_build == BUILD
    check_count, problems = check_submissions(vouched_folder)
    assert (check_count, problems) == (3, [])


def test_a_vendor_key_speaks_only_for_its_own_folder(vouched_folder):
    write_record(vouched_folder, "gpu/gpu.record.json", signed(
        make_record({c: "passed" for c in CONTRACTS}, plugin="gpu", device="GPU X")))
    built = build_matrix([vouched_folder], now=NOW)
    assert [(r.path, r.reason.split(" of signer")[0]) for r in built.matrix.rejected] == [
        (f"{vouched_folder}/gpu/gpu.record.json",
         f"signature: key {signing.fingerprint(ACME.public_key())}")]


def test_a_ci_signed_record_must_name_its_build(vouched_folder):
    write_record(vouched_folder, "cpu/cpu.record.json", signed(
        make_record({c: "passed" for c in CONTRACTS}), CI_KEY, "ci"))
    built = build_matrix([vouched_folder], now=NOW)
    assert [r.reason for r in built.matrix.rejected] == [
        "signature: signed by the CI's key, but names no CI build (provenance/ci/build_url)"]


def test_a_forged_column_in_anothers_name_is_refused_or_self_reported(vouched_folder):
    forged = recomputed(npu_record(started="2026-11-21T10:00:00+00:00"))
    write_record(vouched_folder, "npu/forged.record.json", forged)  # newer, unsigned, same names
    built = build_matrix([vouched_folder], now=NOW)
    npu = next(c for c in built.matrix.columns if c.plugin == "npu")
    assert (npu.trust, npu.trust_label) == ("self_reported", "self-reported")  # the newest shows as what it is


def test_sign_and_verify_commands_with_an_ssh_keygen_key(tmp_path):
    key = tmp_path / "keys" / "acme_ed25519"
    key.parent.mkdir()
    made = subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "acme", "-f", str(key)],
                          capture_output=True, text=True, timeout=patience.scaled(1800))
    assert made.returncode == 0, made.stderr
    keyring = tmp_path / "allowed_signers"
    keyring.write_text("acme " + (key.with_suffix(".pub")).read_text())
    record = write_record(tmp_path, "npu.record.json", npu_record())
    sign = conformance("matrix", "sign", str(record), "--key", str(key), "--signer", "acme")
    assert sign.returncode == 0, sign.stderr
    assert sign.stdout.startswith(f"signed {record} as acme (SHA256:")
    fingerprint = subprocess.run(["ssh-keygen", "-l", "-f", str(key)], capture_output=True, text=True).stdout
    assert sign.stdout.split("(")[1].rstrip(")\n") == fingerprint.split()[1]  # ssh-keygen's own
    verify = conformance("verify", "--allowed-signers", str(keyring), str(record))
    assert verify.returncode == 0 and verify.stdout.rstrip().endswith(f"signed by acme ({fingerprint.split()[1]})")

    data = json.loads(record.read_text())
    data["provenance"]["plugin"]["name"] = "gpu"
    record.write_text(json.dumps(data))
    verify = conformance("verify", "--allowed-signers", str(keyring), str(record))
    assert (verify.returncode, verify.stderr) == (2, "")
    assert verify.stdout.startswith(f"INVALID: {record}: signature: does not match the record's content")
    assert verify.stdout.count("\n") == 1


def test_a_bad_key_or_keyring_is_one_line(tmp_path):
    record = write_record(tmp_path, "npu.record.json", npu_record())
    (tmp_path / "not-a-key").write_text("hello")
    sign = conformance("matrix", "sign", str(record), "--key", str(tmp_path / "not-a-key"), "--signer", "acme")
    assert sign.returncode == 2 and sign.stderr.startswith(
        f"conformance matrix sign: signing key {tmp_path / 'not-a-key'} cannot be loaded")
    assert sign.stderr.count("\n") == 1
    (tmp_path / "allowed_signers").write_text("acme ssh-rsa AAAA\n")
    verify = conformance("verify", "--allowed-signers", str(tmp_path / "allowed_signers"), str(record))
    assert (verify.returncode, verify.stderr) == (
        2, f"conformance verify: keyring {tmp_path / 'allowed_signers'}, line 1: expected "
           "'PRINCIPAL ssh-ed25519 KEY [comment]'\n")
    write_private_key(tmp_path / "key", ACME)
    assert conformance("matrix", "sign", str(record), "--key", str(tmp_path / "key"),
                       "--signer", "acme").returncode == 0


def test_the_collector_signs_the_site_it_publishes(vouched_folder, tmp_path):
    key = write_private_key(tmp_path / "collector_key", CI_KEY)
    site = tmp_path / "site"
    build = conformance("matrix", "build", str(vouched_folder), "-o", str(site),
                        "--signing-key", str(key), "--signer", "ci")
    assert build.returncode == 0, build.stderr
    assert build.stdout.splitlines()[-1] == (f"signed {site / 'matrix.json'} as ci "
                                             f"({signing.fingerprint(CI_KEY.public_key())})")
    keyring = vouched_folder / "allowed_signers"
    checked = conformance("matrix", "verify-site", str(site), "--allowed-signers", str(keyring))
    assert (checked.returncode, checked.stdout) == (
        0, f"{site / 'matrix.json'}: signed by ci ({signing.fingerprint(CI_KEY.public_key())})\n")

    # A platform's cells are in its own file, which the signed matrix.json names with its digest.
    matrix = json.loads((site / "matrix.json").read_text())
    platform = site / matrix["columns"][0]["file"]
    original = platform.read_bytes()
    # A forger's edit, whatever the file's whitespace: one passed cell made a failed one.
    forged = original.replace(b'"passed"', b'"failed"', 1)
    assert forged != original
    platform.write_bytes(forged)
    checked = conformance("matrix", "verify-site", str(site), "--allowed-signers", str(keyring))
    assert (checked.returncode, checked.stderr) == (
        1, f"conformance matrix verify-site: {platform}: does not match the digest the signed matrix.json "
           "gives it\n")
    platform.write_bytes(original)

    matrix["columns"][0]["trust"] = "vendor"
    (site / "matrix.json").write_text(json.dumps(matrix))
    checked = conformance("matrix", "verify-site", str(site), "--allowed-signers", str(keyring))
    assert checked.returncode == 1
    assert checked.stderr == (f"conformance matrix verify-site: {site / 'matrix.json.sig'}: signature: does "
                              "not match the matrix.json's content (signed by ci, "
                              f"{signing.fingerprint(CI_KEY.public_key())}): the matrix.json was changed "
                              "after it was signed\n")


def test_a_record_signature_never_passes_for_a_site_with_the_same_bytes():
    record = signed(npu_record())
    signed_bytes = signing.canonical_bytes(record)
    payload = signed_bytes[signed_bytes.index(b"\n") + 1:]  # the record's JSON after the domain line
    assert signing.check_bytes(signed_bytes, record["signature"], None, None, "record")[1] is None
    _, problem = signing.check_bytes(signing.SITE_DOMAIN + payload, record["signature"], None, None,
                                     "matrix.json")
    assert problem and problem.startswith("signature: does not match the matrix.json's content")


def test_the_bot_refuses_an_unsigned_record_in_a_signing_vendors_folder(vouched_folder):
    write_record(vouched_folder, "npu/unsigned.record.json", npu_record(started="2026-11-21T10:00:00+00:00"))
    _, problems = check_submissions(vouched_folder)
    assert problems == [f"{vouched_folder}/npu/unsigned.record.json: unsigned, in a folder whose "
                        "allowed_signers says its records are signed: sign it with one of those keys"]


def test_a_backdated_record_cannot_take_a_signing_vendors_plugin_name(vouched_folder):
    """The earliest record would own the name; a signed one outranks any unsigned one."""
    write_record(vouched_folder, "npu/old.record.json", make_record(
        {c: "passed" for c in CONTRACTS}, plugin="npu", device="NPU-9", distribution="evil-npu",
        started="2020-01-01T00:00:00+00:00"))
    _, problems = check_submissions(vouched_folder)
    assert f"{vouched_folder}/npu/old.record.json: plugin name 'npu' belongs to distribution 'acme-npu' " \
           f"(its first record: {vouched_folder}/npu/npu.record.json); distribution 'evil-npu' may not " \
           "submit under it" in problems


def test_the_history_says_who_vouches_for_each_run(vouched_folder):
    write_record(vouched_folder, "npu/earlier.record.json", signed(npu_record(started="2026-11-19T10:00:00+00:00")))
    built = build_matrix([vouched_folder], now=NOW)
    npu = next(h for h in built.matrix.histories if h.plugin == "npu")
    assert [(r.date[:10], r.trust) for r in npu.runs] == [("2026-11-20", "signed by acme"),
                                                          ("2026-11-19", "signed by acme")]
    gpu = next(h for h in built.matrix.histories if h.plugin == "gpu")
    assert [r.trust for r in gpu.runs] == ["self-reported"]


def test_the_ci_key_never_counts_as_a_vendors(vouched_folder):
    """A record at the top of the records folder, beside the CI's keyring, signed by
    the CI's key without a build link, is not 'signed by ci' as a vendor."""
    write_record(vouched_folder, "top.record.json", signed(
        make_record({c: "passed" for c in CONTRACTS}, plugin="top"), CI_KEY, "ci"))
    built = build_matrix([vouched_folder], now=NOW)
    assert [r.reason for r in built.matrix.rejected] == [
        "signature: signed by the CI's key, but names no CI build (provenance/ci/build_url)"]


def test_no_private_key_lies_in_the_repository():
    """Keys are made by the tests that use them; the repository holds public keys only."""
    root = Path(__file__).resolve().parents[2]
    marker = "PRIVATE" + " KEY-----"  # split, so this file does not match itself
    found = [str(path.relative_to(root)) for folder in ("matrix", "conformance", "tests", "docs", "examples")
             for path in (root / folder).rglob("*")
             if path.is_file() and path.suffix not in (".pyc", ".so") and marker in path.read_text(errors="ignore")]
    assert found == []
