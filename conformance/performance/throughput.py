"""Output tokens per second of the reference engine on a platform.

The workloads are ``bench/throughput.py``'s: (a) one request, a 64-token prompt;
(b) 16 requests, prompts of 16..256 tokens; greedy decoding, exactly ``NEW_TOKENS``
new tokens per request. ``conformance run --bench`` reports (a) as batch 1 and (b) as
batch 16.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

from conformance.reference_engine import LLM, SamplingParams

NEW_TOKENS = 128

#: A workload's runner: generates for the prompts, returns the tokens it generated.
Run = Callable[[list[list[int]]], int]


def workloads(vocab_size: int) -> dict[str, list[list[int]]]:
    """The prompts of workloads ``a`` (batch 1) and ``b`` (batch 16), as token ids."""
    def prompt(length: int, salt: int) -> list[int]:
        return [1] + [(salt * 7919 + 104729 * i) % (vocab_size - 3) + 3 for i in range(length - 1)]

    lengths = [16 + round(i * (256 - 16) / 15) for i in range(16)]
    return {"a": [prompt(64, 0)], "b": [prompt(n, i) for i, n in enumerate(lengths)]}


def engine_generate(llm: LLM, prompts: list[list[int]]) -> int:
    params = SamplingParams(temperature=0, max_tokens=NEW_TOKENS, ignore_eos=True)
    outputs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return sum(len(o.outputs[0].token_ids) for o in outputs)


def rate(run: Run, prompts: list[list[int]], synchronize: Callable[[], None]) -> float:
    """Output tokens per second of one call of ``run``."""
    synchronize()
    start = time.perf_counter()
    tokens = run(prompts)
    synchronize()
    return tokens / (time.perf_counter() - start)


def median_rates(runs: Sequence[Run], prompts: list[list[int]], repeats: int,
                 synchronize: Callable[[], None]) -> list[float]:
    """Median output tokens/s of each of ``runs``, timed in alternation (so a busy
    spell on the machine hits all of them alike) after one warm-up each."""
    for run in runs:
        run(prompts)  # first-call allocations and kernel selection
    rates: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for run, measured in zip(runs, rates):
            measured.append(rate(run, prompts, synchronize))
    return [statistics.median(r) for r in rates]
