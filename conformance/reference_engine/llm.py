"""``LLM``: the user's entry point, shaped as vLLM's offline API."""

from __future__ import annotations

import itertools
import pkgutil
import sys
import time
import weakref

import torch

from conformance.contract.attention import AttentionSelectorConfig
from conformance.contract.config import EngineConfig
from conformance.contract.sampling_params import SamplingParams
from conformance.reference_engine.engine.llm_engine import LLMEngine
from conformance.reference_engine.engine.sequence import Sequence
from conformance.reference_engine.models.config import get_model_config
from conformance.reference_engine.outputs import CompletionOutput, Logprob, RequestOutput
from conformance.reference_engine.platforms import PlatformSpec, resolve_platform
from conformance.reference_engine.tokenizer import get_tokenizer

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
Prompt = str | dict


class LLM:
    """A model on a platform, ready to ``generate``.

    ``model`` is a preset name (``tiny``, ``small``) or a Hugging Face folder.
    ``platform`` is a plugin name or a ``Platform`` subclass (None: the first usable
    built-in one); it is resolved once and handed down in the config, so engines on
    different platforms can share a process. ``num_kv_blocks`` fixes the KV-cache
    size (default: from memory).
    """

    def __init__(
        self,
        model: str = "tiny",
        dtype: str = "float32",
        tensor_parallel_size: int = 1,
        block_size: int = 16,
        max_num_seqs: int = 64,
        max_num_batched_tokens: int = 2048,
        max_model_len: int | None = None,
        seed: int = 0,
        platform: PlatformSpec = None,
        kv_cache_dtype: str = "auto",
        num_kv_blocks: int | None = None,
        distributed_executor_backend: str | None = None,
    ) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        model_config = get_model_config(model)
        max_model_len = max_model_len or model_config.max_position_embeddings
        if max_model_len > model_config.max_position_embeddings:
            raise ValueError(
                f"max_model_len {max_model_len} exceeds the model's max_position_embeddings "
                f"{model_config.max_position_embeddings}"
            )
        for name, value in [("tensor_parallel_size", tensor_parallel_size), ("block_size", block_size),
                            ("max_num_seqs", max_num_seqs), ("max_model_len", max_model_len),
                            ("max_num_batched_tokens", max_num_batched_tokens)]:
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        model_config.check_tensor_parallel(tensor_parallel_size)
        config = EngineConfig(
            model=model,
            architecture=model_config.architecture,
            dtype=DTYPES[dtype],
            kv_cache_dtype=kv_cache_dtype,
            tensor_parallel_size=tensor_parallel_size,
            block_size=block_size,
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens,
            max_model_len=max_model_len,
            seed=seed,
            num_kv_blocks=num_kv_blocks,
            distributed_executor_backend=distributed_executor_backend,
            platform=resolve_platform(platform),
        )
        self.platform = config.platform
        self.platform.check_and_update_config(config)
        config.attention_backend = self._attention_backend(config, model_config.head_size)
        self.config = config
        eos = frozenset(model_config.eos_token_ids)
        self.tokenizer = get_tokenizer(model_config.folder, model_config.vocab_size, eos)
        self.llm_engine = LLMEngine(config, model_config, self.tokenizer.eos_token_ids)
        # A finalizer, not __del__: it also runs at interpreter exit, before
        # multiprocessing reaps the worker processes it would talk to.
        self._finalizer = weakref.finalize(self, self.llm_engine.shutdown)
        self._request_counter = itertools.count()

    def _attention_backend(self, config: EngineConfig, head_size: int) -> str:
        selector = AttentionSelectorConfig(
            head_size=head_size, dtype=config.dtype, block_size=config.block_size,
            kv_cache_dtype=config.kv_cache_dtype,
        )
        name = self.platform.get_attn_backend_cls(selector)
        reasons = pkgutil.resolve_name(name).validate_configuration(selector)
        if reasons:
            raise ValueError(f"attention backend {name} refuses this model: {'; '.join(reasons)}")
        return name

    def generate(
        self,
        prompts: Prompt | list[Prompt],
        sampling_params: SamplingParams | list[SamplingParams] | None = None,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        """Complete every prompt; outputs come back in input order.

        A prompt is a string or ``{"prompt_token_ids": [...]}``. Every request is
        checked before any is queued, so a bad one raises ``ValueError`` (naming it)
        and leaves the engine as it was.
        """
        prompts, sampling_params = paired_requests(prompts, sampling_params)
        requests = [self._tokenize(i, p) for i, p in enumerate(prompts)]
        for i, ((_, token_ids), params) in enumerate(zip(requests, sampling_params)):
            if not isinstance(params, SamplingParams):
                raise ValueError(f"prompt {i}: expected SamplingParams, got {params!r}")
            try:
                self.llm_engine.check_request(token_ids, params)
            except ValueError as exc:
                raise ValueError(f"prompt {i}: {exc}") from None
        ids = [str(next(self._request_counter)) for _ in prompts]
        for request_id, (_, token_ids), params in zip(ids, requests, sampling_params):
            self.llm_engine.add_request(request_id, token_ids, params)
        finished = self._run(len(prompts), use_tqdm)
        return [self._output(finished[r], prompt) for r, (prompt, _) in zip(ids, requests)]

    def _tokenize(self, index: int, prompt: Prompt) -> tuple[str | None, list[int]]:
        if isinstance(prompt, str):
            return prompt, self.tokenizer.encode(prompt)
        if isinstance(prompt, dict) and "prompt_token_ids" in prompt:
            return prompt.get("prompt"), list(prompt["prompt_token_ids"])
        raise ValueError(f"prompt {index}: expected a string or {{'prompt_token_ids': [...]}}, got {prompt!r}")

    def _run(self, total: int, use_tqdm: bool) -> dict[str, Sequence]:
        progress = _Progress(total) if use_tqdm and sys.stderr.isatty() else None
        finished: dict[str, Sequence] = {}
        while self.llm_engine.has_unfinished_requests():
            for seq in self.llm_engine.step():
                finished[seq.request_id] = seq
                if progress:
                    progress.update(seq.num_output_tokens)
        if progress:
            progress.close()
        return finished

    def _output(self, seq: Sequence, prompt: str | None) -> RequestOutput:
        token_ids = seq.output_token_ids
        logprobs = None
        cumulative = None
        if seq.params.logprobs is not None:
            logprobs = [
                {t: Logprob(lp, rank, self.tokenizer.decode([t])) for t, (lp, rank) in step.items()}
                for step in seq.logprobs
            ]
            cumulative = sum(step[t].logprob for t, step in zip(token_ids, logprobs))
        completion = CompletionOutput(
            index=0,
            text=self.tokenizer.decode(token_ids),
            token_ids=token_ids,
            cumulative_logprob=cumulative,
            logprobs=logprobs,
            finish_reason=seq.finish_reason,
        )
        return RequestOutput(seq.request_id, prompt, seq.token_ids[: seq.num_prompt_tokens], [completion], True)

    def shutdown(self) -> None:
        """Stop the workers and free their memory (also done when the LLM is
        collected, or at exit). Idempotent."""
        self._finalizer()


def paired_requests(prompts, sampling_params) -> tuple[list, list]:
    """``generate``'s arguments as two lists of one length: one prompt (a str or a dict)
    becomes a list, and one ``SamplingParams`` (default: the defaults) serves
    every prompt; lists of different lengths raise ``ValueError``."""
    if isinstance(prompts, (str, dict)):
        prompts = [prompts]
    if sampling_params is None:
        sampling_params = SamplingParams()
    if isinstance(sampling_params, SamplingParams):
        sampling_params = [sampling_params] * len(prompts)
    if len(sampling_params) != len(prompts):
        raise ValueError(f"{len(sampling_params)} sampling params for {len(prompts)} prompts")
    return list(prompts), list(sampling_params)


class _Progress:
    """A one-line progress bar on stderr: requests done and output tokens per second."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.tokens = total, 0, 0
        self.start = time.perf_counter()

    def update(self, new_tokens: int) -> None:
        self.done += 1
        self.tokens += new_tokens
        rate = self.tokens / max(time.perf_counter() - self.start, 1e-9)
        sys.stderr.write(f"\rProcessed prompts: {self.done}/{self.total} | {rate:.1f} output tok/s")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")
