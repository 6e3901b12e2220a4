"""The capabilities view: what each platform declares, and whether the record shows
it working.

A declaration is "verified" only when every contract that exercises it ran and
passed in the column's record; a failing, waived or unexpectedly unsupported one
makes it "failing", naming the contract; exercising contracts that did not run leave
it "unverified". What a contract exercises is listed here (``EXERCISED_BY``), by
capability kind and, where a contract covers only some values, by value.
"""

from __future__ import annotations

from conformance.matrix.model import CapabilityCell, CapabilityRow, Column
from conformance.matrix.sources import Accepted

_ATTENTION_FORWARD = ("attention.forward.prefill", "attention.forward.decode",
                      "attention.forward.mixed")
_COLLECTIVES = ("communicator.all_reduce.sum", "communicator.all_gather.dims",
                "communicator.reduce_scatter.dims", "communicator.gather.dst_only",
                "communicator.broadcast.from_src", "communicator.send_recv.pairs",
                "communicator.send_recv.default_peers", "communicator.barrier.waits")

#: Contracts whose tests exercise every declared value of a capability kind.
EXERCISED_BY = {
    "dtypes": ("platform.capabilities.dtypes_compute", "attention.config.accepts_declared",
               *_ATTENTION_FORWARD, "attention.kv_cache.write"),
    "head_sizes": ("attention.config.accepts_declared", "attention.kv_cache.shape",
                   *_ATTENTION_FORWARD),
    "block_sizes": ("attention.config.accepts_declared", "attention.kv_cache.shape",
                    *_ATTENTION_FORWARD),
    "kv_cache_dtypes": ("attention.config.accepts_declared", "attention.kv_cache.write"),
    "features": (),
}

#: Contracts that exercise one value only.
EXERCISED_BY_VALUE = {
    ("dtypes", "float32"): ("engine.generate.fp32_greedy",),
    ("dtypes", "bfloat16"): ("engine.generate.half_logprobs_close",),
    ("dtypes", "float16"): ("engine.generate.half_logprobs_close", "attention.numerics.fp16_long_context"),
    ("features", "sliding_window"): ("attention.features.sliding_window",),
    ("features", "logits_soft_cap"): ("attention.features.logits_soft_cap",),
    ("features", "tensor_parallel"): ("engine.parallel.tensor_parallel", *_COLLECTIVES),
}

_KIND_LABELS = {"dtypes": "dtype", "head_sizes": "head size", "block_sizes": "block size",
                "kv_cache_dtypes": "KV-cache dtype", "features": "feature"}


def declared(record: Accepted) -> dict[str, list[str]]:
    """The record's declared values per kind (nothing when the plugin's declaration
    could not be read: the record then holds an error text instead)."""
    capabilities = record.provenance["device"].get("capabilities")
    if not isinstance(capabilities, dict):
        return {}
    return {kind: [str(v) for v in capabilities.get(kind) or () if isinstance(v, (str, int))]
            for kind in EXERCISED_BY}


def _judge(record: Accepted, kind: str, value: str) -> CapabilityCell:
    contracts = (*EXERCISED_BY[kind], *EXERCISED_BY_VALUE.get((kind, value), ()))
    if not contracts:
        return CapabilityCell("unverified", "no contract of this kit exercises it")
    results = record.data["contracts"]
    failing = [f"{c}: {results[c]['outcome']}" for c in contracts
               if c in results and results[c]["outcome"] not in ("passed", "skipped")]
    if failing:
        return CapabilityCell("failing", "; ".join(failing))
    missing = [c for c in contracts if results.get(c, {}).get("outcome") != "passed"]
    if missing:
        return CapabilityCell("unverified", "not run: " + ", ".join(missing))
    return CapabilityCell("verified", f"{len(contracts)} contracts passed")


def capability_rows(columns: list[Column], records: list[Accepted]) -> list[CapabilityRow]:
    """Rows for every value some column declares, in kind order; ``records`` are the
    columns' records, in the same order."""
    declarations = [declared(r) for r in records]
    rows = []
    for kind in EXERCISED_BY:
        values = sorted({v for d in declarations for v in d.get(kind, ())},
                        key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))
        for value in values:
            cells = {column.id: _judge(record, kind, value) if value in declaration.get(kind, ())
                     else CapabilityCell("not_declared", "")
                     for column, record, declaration in zip(columns, records, declarations)}
            if (kind, value) == ("features", "tensor_parallel"):
                cells = {c.id: _with_world_size(cells[c.id], r) for c, r in zip(columns, records)}
            rows.append(CapabilityRow(kind, value, f"{_KIND_LABELS[kind]} {value}", cells))
    return rows


def _with_world_size(cell: CapabilityCell, record: Accepted) -> CapabilityCell:
    """Tensor parallel is declared with its largest world, so its cells say it."""
    if cell.state == "not_declared":
        return cell
    world = record.provenance["device"]["capabilities"].get("max_world_size")
    return CapabilityCell(cell.state, f"up to {world} ranks; {cell.detail}")
