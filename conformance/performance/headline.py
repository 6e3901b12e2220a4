"""The headline figures ``conformance run --bench`` adds to a record.

Each is measured by the code ``bench/`` runs, with its default settings and fewer
repeats, so one run takes well under a minute on a two-core host:

- ``engine_output_tokens_per_s_batch_1`` / ``_batch_16``: the reference engine on the
  platform running the ``tiny`` preset (4 layers, hidden 256; in the smallest head
  size the platform declares, as the Worker and Engine suites run it), greedy, 128 new
  tokens per request: one 64-token prompt, then 16 prompts of 16..256 tokens. The
  tiny model makes this a figure of the engine's per-step cost on the platform more
  than of the device's arithmetic: ``bench/throughput.py --model small`` is the
  larger measurement, too slow for every run;
- ``decode_attention_gb_per_s``: the platform's attention backend reading the KV cache
  of 16 sequences of 2048 tokens (head size 128, block size 16) for one decode step;
- ``communicator_busbw_gb_per_s_16mb``: the platform's communicator, all_reduce of
  16 MiB of float32 on two rank processes, bus bandwidth of the slowest rank; only
  where the platform declares a world of two and has the devices for it.

Engine and attention run in the first of bfloat16, float16, float32 the platform
declares, in block size 16 where declared. A figure whose shapes the platform does
not declare is left out, with the reason; every figure is a median of a few repeats.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from conformance.contract.platform import Platform
from conformance.performance import attention, communicator, throughput
from conformance.reference_engine import LLM
from conformance.reference_engine.models.config import get_model_config, tiny_variant
from conformance.results.record import utc_now
from conformance.suites.ranks import ranks_on

REPEATS = 3
ATTENTION_REPEATS = 15
BUSBW_SIZE = 16 * 2**20
BUSBW_WORLD_SIZE = 2
GB = 1e9

#: The figure names of a record's ``performance`` section, as the matrix labels them.
BATCH_1 = "engine_output_tokens_per_s_batch_1"
BATCH_16 = "engine_output_tokens_per_s_batch_16"
DECODE_ATTENTION = "decode_attention_gb_per_s"
BUSBW_16MB = "communicator_busbw_gb_per_s_16mb"
FIGURES = (BATCH_1, BATCH_16, DECODE_ATTENTION, BUSBW_16MB)


def headline_dtype(platform: type[Platform]) -> torch.dtype:
    """The dtype the figures are measured in: the fastest one the platform declares."""
    declared = platform.capabilities.dtypes
    return next((d for d in (torch.bfloat16, torch.float16, torch.float32) if d in declared), declared[0])


def engine_model(platform: type[Platform]) -> tuple[str, int]:
    """The model preset and block size the engine figures are measured with."""
    caps = platform.capabilities
    return tiny_variant(min(caps.head_sizes)), 16 if 16 in caps.block_sizes else caps.block_sizes[0]


def undeclared(platform: type[Platform], head_size: int, block_size: int) -> str | None:
    """Why the platform cannot be measured at these shapes, or None."""
    caps = platform.capabilities
    gaps = []
    if head_size not in caps.head_sizes:
        gaps.append(f"head size {head_size}")
    if block_size not in caps.block_sizes:
        gaps.append(f"block size {block_size}")
    return f"the platform does not declare {' or '.join(gaps)}" if gaps else None


def figure(name: str, value: float, unit: str, **extra: int) -> dict:
    return {"name": name, "value": float(f"{value:.4g}"), "unit": unit, **extra}


def engine_figures(platform: type[Platform], dtype: torch.dtype, repeats: int = REPEATS) -> list[dict]:
    model, block_size = engine_model(platform)
    llm = LLM(model=model, dtype=str(dtype).removeprefix("torch."), platform=platform, block_size=block_size,
              max_model_len=512, max_num_seqs=16, max_num_batched_tokens=2048)
    try:
        jobs = throughput.workloads(get_model_config(model).vocab_size)
        figures = []
        for name, workload in ((BATCH_1, "a"), (BATCH_16, "b")):
            [tokens_per_s] = throughput.median_rates(
                [lambda p: throughput.engine_generate(llm, p)], jobs[workload], repeats, platform.synchronize)
            figures.append(figure(name, tokens_per_s, "tok/s"))
        return figures
    finally:
        llm.shutdown()


def attention_figures(platform: type[Platform], dtype: torch.dtype) -> list[dict]:
    rate = attention.decode_kv_read_bytes_per_s(platform, dtype, repeats=ATTENTION_REPEATS)
    return [figure(DECODE_ATTENTION, rate / GB, "GB/s")]


def communicator_figures(platform: type[Platform]) -> list[dict]:
    busbw = communicator.all_reduce_busbw(platform, BUSBW_WORLD_SIZE, BUSBW_SIZE)
    return [figure(BUSBW_16MB, busbw / GB, "GB/s", world_size=BUSBW_WORLD_SIZE)]


def measure(platform: type[Platform], say: Callable[[str], None] = print) -> dict:
    """The ``performance`` section of a record for ``platform``, measured here.
    ``say`` hears one line per figure and per figure left out."""
    dtype = headline_dtype(platform)
    measured_at = utc_now()
    model, block_size = engine_model(platform)
    say(f"bench: measuring {platform.get_device_name()} in {str(dtype).removeprefix('torch.')} "
        f"(engine: model {model}, block size {block_size})")
    plan = [
        ("engine", None, lambda: engine_figures(platform, dtype)),
        ("decode attention", undeclared(platform, attention.HEAD_SIZE, attention.BLOCK_SIZE),
         lambda: attention_figures(platform, dtype)),
        ("communicator busbw", ranks_on(platform, BUSBW_WORLD_SIZE),
         lambda: communicator_figures(platform)),
    ]
    figures = []
    for what, gap, run in plan:
        if gap:
            say(f"bench: {what} left out: {gap}")
            continue
        for measured in run():
            say(f"bench: {measured['name']} = {measured['value']} {measured['unit']}")
            figures.append(measured)
    return {"device": platform.get_device_name(), "measured_at": measured_at, "figures": figures}
