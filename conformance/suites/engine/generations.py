"""The Engine suite's generations: the plugin's and the reference platform's engines on
the same seeded tiny model, made once per session and dtype, on demand."""

from __future__ import annotations

import dataclasses

import torch

from conformance.contract.sampling_params import SamplingParams
from conformance.reference_engine.llm import LLM
from conformance.reference_engine.models.config import get_model_config
from conformance.suites import model_settings
from conformance.suites.closeness import TOP_N, Logprobs
from conformance.suites.model_settings import dtype_name
from conformance.suites.support import exercised

#: Prompt token ids (tokenizer-independent): short, one block and a half, two blocks.
PROMPTS = [[(17 * n + 5 * k) % 4000 + 10 for k in range(length)]
           for n, length in enumerate((6, 23, 33))]
MAX_TOKENS = 12
GREEDY = SamplingParams(temperature=0.0, max_tokens=MAX_TOKENS, logprobs=TOP_N, ignore_eos=True)
SEEDED = SamplingParams(temperature=1.0, seed=4321, max_tokens=MAX_TOKENS, ignore_eos=True)
LLM_SETTINGS = dict(max_model_len=model_settings.MAX_MODEL_LEN, max_num_seqs=8)


@dataclasses.dataclass
class Completion:
    tokens: list[int]
    logprobs: list[Logprobs]


def completions(llm: LLM, prompts: list[list[int]], params: SamplingParams) -> list[Completion]:
    outputs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return [Completion(list(o.outputs[0].token_ids),
                       [{t: lp.logprob for t, lp in step.items()} for step in o.outputs[0].logprobs or []])
            for o in outputs]


class Generations:
    """Greedy completions of ``PROMPTS`` per (platform, dtype), computed on first use;
    ``extra`` runs more requests on the plugin's engine before it is shut down."""

    def __init__(self, platform) -> None:
        self.platform = platform
        self.reference = model_settings.reference_platform()
        #: The plugin's model and block size, for the reference too: the same shapes
        #: and paging on both.
        self.model = model_settings.model_for(platform)
        self.block_size = model_settings.block_size_for(platform)
        self._cache: dict = {}

    def _generate(self, on_plugin: bool, dtype: torch.dtype, extra=None):
        platform = self.platform if on_plugin else self.reference
        with model_settings.host_threads():
            llm = LLM(model=self.model, dtype=dtype_name(dtype), platform=platform,
                      block_size=self.block_size, **LLM_SETTINGS)
            try:
                return completions(llm, PROMPTS, GREEDY), extra(llm) if extra else None
            finally:
                llm.shutdown()

    def reference_greedy(self, dtype: torch.dtype) -> list[Completion]:
        key = ("reference", dtype)
        if key not in self._cache:
            self._cache[key] = self._generate(False, dtype)[0]
        return self._cache[key]

    def plugin_greedy(self, dtype: torch.dtype) -> list[Completion]:
        return self.plugin_with_batching(dtype)[0]

    def plugin_with_batching(self, dtype: torch.dtype):
        """The plugin's greedy batch, and a dict of the same requests alone and
        in a batch (greedy and seeded), all from one engine."""
        exercised(head_sizes=get_model_config(self.model).head_size, block_sizes=self.block_size,
                  dtypes=dtype, kv_cache_dtypes="auto")
        key = ("plugin", dtype)
        if key not in self._cache:
            self._cache[key] = self._generate(True, dtype, _alone_and_batched)
        return self._cache[key]


def _alone_and_batched(llm: LLM) -> dict[str, list[Completion]]:
    seeded_batch = completions(llm, PROMPTS, SEEDED)
    return {"greedy_alone": completions(llm, PROMPTS[1:2], GREEDY),
            "seeded_alone": completions(llm, PROMPTS[1:2], SEEDED),
            "seeded_batch": seeded_batch}
