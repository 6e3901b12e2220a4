"""Performance figures of a record, shown under their own column only."""

from __future__ import annotations

import pytest
from generated_records import make_record, write_record
from scenario import CONTRACTS, NOW

from conformance.matrix.build import build_matrix
from conformance.matrix.site import write_site


def performance(device: str, tokens: float) -> dict:
    return {"performance": {"device": device, "measured_at": "2026-11-24T10:00:00+00:00", "figures": [
        {"name": "engine_output_tokens_per_s_batch_1", "value": tokens, "unit": "tok/s"},
        {"name": "engine_output_tokens_per_s_batch_16", "value": tokens * 9, "unit": "tok/s"},
        {"name": "decode_attention_gb_per_s", "value": 61.5, "unit": "GB/s"},
        {"name": "communicator_busbw_gb_per_s_16mb", "value": 3.25, "unit": "GB/s", "world_size": 2},
    ]}}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perf")
    passed = {c: "passed" for c in CONTRACTS}
    write_record(folder, "a/a.record.json", make_record(passed, plugin="a", device="Chip A",
                                                        extra=performance("Chip A", 40.0)))
    write_record(folder, "b/b.record.json", make_record(passed, plugin="b", device="Chip B",
                                                        extra=performance("Chip B", 4000.0)))
    write_record(folder, "c/c.record.json", make_record(passed, plugin="c", device="Chip C"))
    built = build_matrix([folder], now=NOW)
    return built, write_site(built, tmp_path_factory.mktemp("out") / "site")


def test_figures_are_labelled_with_their_device_and_date(built):
    a, b, c = built[0].matrix.columns
    assert (a.performance.device, a.performance.measured_at) == ("Chip A", "2026-11-24T10:00:00+00:00")
    assert [(f.label, f.value, f.unit, f.world_size) for f in a.performance.figures] == [
        ("engine output, batch 1", 40.0, "tok/s", None),
        ("engine output, batch 16", 360.0, "tok/s", None),
        ("decode attention KV read", 61.5, "GB/s", None),
        ("communicator all_reduce busbw, 16 MB", 3.25, "GB/s", 2)]
    assert c.performance is None


def test_each_column_shows_only_its_own_figures_never_a_ratio(built):
    matrix, site = built[0].matrix, built[1]

    def section(column) -> str:
        html = (site / "platforms" / f"{column.id}.html").read_text(encoding="utf-8")
        return html[html.index('<h2 id="performance">'):html.index('<h2 id="history">')]

    a, b, c = (section(column) for column in matrix.columns)
    assert "Measured on Chip A, 2026-11-24" in a and "engine output, batch 1: 40.0 tok/s" in a
    assert "Measured on Chip B, 2026-11-24" in b and "engine output, batch 1: 4,000 tok/s" in b
    assert "Chip B" not in a and "Chip A" not in b
    assert "communicator all_reduce busbw, 16 MB (2 ranks): 3.25 GB/s" in a
    assert "No figures in the record" in c
    for ratio_word in ("%", " faster", "speed-up", "relative"):
        assert ratio_word not in a + b
    # The overview shows each platform's first figure, labelled, and no ratio either.
    overview = (site / "index.html").read_text(encoding="utf-8")
    assert "40.0 tok/s" in overview and "4,000 tok/s" in overview
    assert "no figures in the record" in overview
