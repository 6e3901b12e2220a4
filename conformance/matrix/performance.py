"""A record's optional headline figures, labelled for the page.

Figures are shown under their own column with the device and date they were measured
on, and never divided by another column's: two devices' numbers are not a ratio the
kit can vouch for (different hosts, drivers, clocks).
"""

from __future__ import annotations

from conformance.matrix.model import Figure, Performance

#: What each figure name of the record's ``performance`` section measures.
LABELS = {
    "engine_output_tokens_per_s_batch_1": "engine output, batch 1",
    "engine_output_tokens_per_s_batch_16": "engine output, batch 16",
    "decode_attention_gb_per_s": "decode attention KV read",
    "communicator_busbw_gb_per_s_16mb": "communicator all_reduce busbw, 16 MB",
}


def performance_of(record: dict) -> Performance | None:
    section = record.get("performance")
    if not section:
        return None
    figures = [Figure(name=f["name"], label=LABELS.get(f["name"], f["name"]),
                      value=float(f["value"]), unit=f["unit"], world_size=f.get("world_size"))
               for f in section["figures"]]
    return Performance(section["device"], section["measured_at"], figures)
