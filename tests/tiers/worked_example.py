"""The worked example of docs/tiers.md: three platforms with different histories, as
signed record files, judged on ``AS_OF``.

- ``acme_npu`` on ``Acme NPU 2``: ten nightly CI-built records of kit 0.1.0, all
  CONFORMANT (official), then the candidate's first run, NOT CONFORMANT: it blocks.
- ``tpu_lab`` on ``Lab TPU``: three vendor-signed records of 0.1.0 (11-08 to 11-22), CONFORMANT, with
  one waiver (supported); it has not run the candidate: listed, not blocking.
- ``newchip`` on ``NewChip X1``: self-reported, NOT CONFORMANT on 0.1.0, then
  CONFORMANT on the candidate (experimental).
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from generated_records import make_record, write_record
from signing_keys import write_keyring

from conformance.matrix.kits import installed_kit, read_releases
from conformance.results.signing import sign_record

AS_OF = "2026-11-25T12:00:00+00:00"
RELEASE = next(kit for kit in read_releases() if kit.version == "0.1.0")
WAIVED = "attention.features.logits_soft_cap"
FAILED = "attention.forward.decode"


def _results(kit, **overrides) -> dict:
    return {**{contract: "passed" for contract in kit.contracts}, **overrides}


def write_example(folder: Path) -> Path:
    """Write the three platforms' records under ``folder``; returns it."""
    ci_key, vendor_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    write_keyring(folder, ("ci", ci_key))
    write_keyring(folder / "tpu_lab", ("lab-vendor", vendor_key))
    candidate = installed_kit()

    def acme(day: int, kit, results) -> None:
        build = {"provider": "buildkite", "build_url": f"https://buildkite.example/acme/builds/{day}"}
        record = make_record(results, plugin="acme_npu", device="Acme NPU 2", distribution="acme-npu",
                             version="2.4.0", kit=kit, started=f"2026-11-{day:02d}T02:00:00+00:00", ci=build)
        write_record(folder, f"acme_npu/nightly-{day:02d}.record.json", sign_record(record, ci_key, "ci"))

    for day in range(12, 22):
        acme(day, RELEASE, _results(RELEASE))
    acme(23, candidate, _results(candidate, **{FAILED: "failed"}))

    waiver = [("waived", "waived: firmware 3.1 lacks soft-cap (https://lab.example/bugs/41)")]
    for day in (8, 15, 22):
        record = make_record(_results(RELEASE, **{WAIVED: waiver}), plugin="tpu_lab", device="Lab TPU",
                             distribution="tpu-lab", version="0.9.0", kit=RELEASE,
                             started=f"2026-11-{day:02d}T09:00:00+00:00")
        write_record(folder, f"tpu_lab/run-{day:02d}.record.json", sign_record(record, vendor_key, "lab-vendor"))

    write_record(folder, "newchip/first.record.json", make_record(
        _results(RELEASE, **{FAILED: "failed"}), plugin="newchip", device="NewChip X1",
        distribution="newchip", version="0.1.0", kit=RELEASE, started="2026-11-20T15:00:00+00:00"))
    write_record(folder, "newchip/second.record.json", make_record(
        _results(candidate), plugin="newchip", device="NewChip X1", distribution="newchip",
        version="0.2.0", kit=candidate, started="2026-11-24T15:00:00+00:00"))
    return folder
