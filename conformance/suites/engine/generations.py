"""The Engine suite's generations: the plugin's and the reference platform's engines on
the same seeded tiny model, made once per session and dtype, on demand.

The plugin's engine is the one its platform names (``Platform.engine_cls``: a bridge's,
such as ``vllm.LLM``), else the reference engine driving the plugin's pieces; the
reference side is always the reference engine on the reference platform."""

from __future__ import annotations

import dataclasses
import pkgutil
from collections.abc import Callable

import torch

from conformance.contract.sampling_params import SamplingParams
from conformance.reference_engine.llm import LLM
from conformance.reference_engine.models.config import get_model_config
from conformance.suites import model_settings
from conformance.suites.closeness import TOP_N, Logprobs
from conformance.suites.model_settings import dtype_name
from conformance.suites.sampling import FILTERED
from conformance.suites.support import exercised

#: Prompt token ids (tokenizer-independent): short, one block and a half, two blocks.
PROMPTS = [[(17 * n + 5 * k) % 4000 + 10 for k in range(length)]
           for n, length in enumerate((6, 23, 33))]
MAX_TOKENS = 12
GREEDY = SamplingParams(temperature=0.0, max_tokens=MAX_TOKENS, logprobs=TOP_N, ignore_eos=True)
SEEDED = SamplingParams(temperature=1.0, seed=4321, max_tokens=MAX_TOKENS, ignore_eos=True)
#: The filtered requests of ``sampling.FILTERED``, each generating a few tokens from
#: a prompt of ``PROMPTS`` (in turn).
FILTERED_REQUESTS = [dataclasses.replace(params, max_tokens=6, ignore_eos=True) for params in FILTERED]
FILTERED_PROMPTS = [PROMPTS[i % len(PROMPTS)] for i in range(len(FILTERED_REQUESTS))]
LLM_SETTINGS = dict(max_model_len=model_settings.MAX_MODEL_LEN, max_num_seqs=8)


def engine_for(platform) -> type:
    """The engine class that runs ``platform`` in this suite."""
    name = platform.engine_cls()
    return LLM if name is None else pkgutil.resolve_name(name)


@dataclasses.dataclass
class Completion:
    tokens: list[int]
    logprobs: list[Logprobs]


def completions(llm: LLM, prompts: list[list[int]], params) -> list[Completion]:
    outputs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return [Completion(list(o.outputs[0].token_ids),
                       [{t: lp.logprob for t, lp in step.items()} for step in o.outputs[0].logprobs or []])
            for o in outputs]


class Runs(dict):
    """Completions by run name, from one engine. A run the engine refused (or failed)
    holds its error and raises it where a test reads that run, so only the tests that
    judge that run fail: an engine that refuses the filtered requests still has its
    greedy ones judged."""

    def __getitem__(self, run: str) -> list[Completion]:
        completions = super().__getitem__(run)
        if isinstance(completions, Exception):
            raise completions
        return completions


def _runs(makers: dict[str, Callable[[], list[Completion]]]) -> Runs:
    runs = Runs()
    for run, make in makers.items():
        try:
            runs[run] = make()
        except Exception as error:  # raised again where a test reads this run
            runs[run] = error
    return runs


def _filtered(llm: LLM) -> dict[str, Callable[[], list[Completion]]]:
    return {"filtered": lambda: completions(llm, FILTERED_PROMPTS, FILTERED_REQUESTS)}


def _plugin_runs(llm: LLM) -> dict[str, Callable[[], list[Completion]]]:
    """Besides the greedy batch: the same requests alone and in a batch (greedy and
    seeded), and the filtered requests, all from one engine."""
    return {"greedy_alone": lambda: completions(llm, PROMPTS[1:2], GREEDY),
            "seeded_alone": lambda: completions(llm, PROMPTS[1:2], SEEDED),
            "seeded_batch": lambda: completions(llm, PROMPTS, SEEDED),
            **_filtered(llm)}


class Generations:
    """Completions of ``PROMPTS`` per (platform, dtype), computed on first use: the
    greedy batch and the filtered requests on both platforms, and what
    ``_plugin_runs`` asks of the plugin's engine besides."""

    def __init__(self, platform) -> None:
        self.platform = platform
        self.reference_platform = model_settings.reference_platform()
        #: The plugin's model and block size, for the reference too: the same shapes
        #: and paging on both.
        self.model = model_settings.model_for(platform)
        self.block_size = model_settings.block_size_for(platform)
        self._cache: dict = {}

    def _generate(self, platform, dtype: torch.dtype, block_size: int, more, kv_cache_dtype: str = "auto") -> Runs:
        # Asked for only where it is not the default: an engine that ``engine_cls``
        # names need not take the keyword to run every other generation.
        cache = {} if kv_cache_dtype == "auto" else {"kv_cache_dtype": kv_cache_dtype}
        with model_settings.host_threads():
            llm = engine_for(platform)(model=self.model, dtype=dtype_name(dtype), platform=platform,
                                       block_size=block_size, **LLM_SETTINGS, **cache)
            try:
                return _runs({"greedy": lambda: completions(llm, PROMPTS, GREEDY), **more(llm)})
            finally:
                llm.shutdown()

    def _exercise(self, dtype: torch.dtype, block_size: int, kv_cache_dtype: str = "auto") -> None:
        # On every use, not only the first: each test that judges a run exercised it.
        exercised(head_sizes=get_model_config(self.model).head_size, block_sizes=block_size,
                  dtypes=dtype, kv_cache_dtypes=kv_cache_dtype)
        if self.platform.capabilities.supports("zeroed_cache_blocks"):
            # The engine zeroes each new block for it: generation is where that shows.
            exercised(features="zeroed_cache_blocks")

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def reference(self, dtype: torch.dtype) -> Runs:
        """The reference platform's ``greedy`` and ``filtered`` completions."""
        return self._cached(("reference", dtype), lambda: self._generate(
            self.reference_platform, dtype, self.block_size, _filtered))

    def plugin(self, dtype: torch.dtype) -> Runs:
        """The plugin's ``greedy`` completions and those of ``_plugin_runs``."""
        self._exercise(dtype, self.block_size)
        return self._cached(("plugin", dtype), lambda: self._generate(
            self.platform, dtype, self.block_size, _plugin_runs))

    def plugin_greedy_in(self, dtype: torch.dtype, block_size: int, kv_cache_dtype: str = "auto") -> list[Completion]:
        """The plugin's greedy completions with another block size or KV-cache dtype."""
        self._exercise(dtype, block_size, kv_cache_dtype)
        return self._cached(("plugin", dtype, block_size, kv_cache_dtype), lambda: self._generate(
            self.platform, dtype, block_size, lambda llm: {}, kv_cache_dtype))["greedy"]
