"""The Engine suite's engine on a bridged platform: vLLM's public ``vllm.LLM`` behind
the reference engine's ``LLM`` interface (``Platform.engine_cls``).

On a bridged platform the plugin's engine is vLLM's, so the suite judges ``vllm.LLM``
(its scheduler, model, sampler and worker, and the plugin's attention and
communicator) against the kit's reference engine on the same seeded model, by the
suite's own rules. Only vLLM's offline API is used: ``LLM``, ``SamplingParams``,
``TokensPrompt`` and ``RequestOutput``, its most stable surface.

- The model is the kit's, with the weights the reference engine draws for it
  (``random_weights``), exported once per (model, seed) as a Hugging Face folder, which
  vLLM loads as it would a user's checkpoint. Nothing is downloaded.
- Each engine runs in a spawned process of its own. Building vLLM's config rewrites the
  process environment (``LD_PRELOAD``, ``VLLM_WORKER_MULTIPROC_METHOD``, ...), vLLM's CPU
  worker replaces ``torch.set_num_threads`` process-wide, and vLLM keeps process-wide
  state (its current config, its distributed groups): none of that may reach the
  kit's process, where the reference engine and the next tests run. The process ends
  with ``shutdown()``, and vLLM's exit handlers stop whatever it started; a test's
  timeout or Ctrl-C while it starts or generates kills it at once, and it dies with
  the kit's process (``child_process``). Its start (importing vLLM, building the
  engine) is bounded by ``--startup-timeout``, not by the test's own deadline
  (``reference_engine.distributed.startup``).
- What the engine runs with is checked against what the suite asked for: a dtype,
  block size or tensor-parallel size the plugin's ``check_and_update_config`` changed
  fails the test that asked, naming the change (``config_changes``).
"""

from __future__ import annotations

import dataclasses
import functools

from conformance.bridges.vllm.child_process import ChildCallTimeout, ChildProcess
from conformance.bridges.vllm.config import folder_removed_at_exit, write_model_config
from conformance.bridges.vllm.config_changes import ConfigChange, recording_hook, refuse_changed
from conformance.bridges.vllm.errors import plugin_label
from conformance.bridges.vllm.platform import VllmBridgedPlatform
from conformance.contract.sampling_params import SamplingParams
from conformance.reference_engine.distributed import startup
from conformance.reference_engine.llm import DTYPES, paired_requests
from conformance.reference_engine.models.config import ModelConfig, get_model_config
from conformance.reference_engine.models.loader import random_weights
from conformance.reference_engine.outputs import CompletionOutput, Logprob, RequestOutput
from conformance.results.outcomes import TimedOut

#: What the engine's process sets before it imports vLLM, and why:
CHILD_ENVIRONMENT = {
    # vLLM's engine core in this process, not in one more: the process already keeps
    # vLLM apart from the kit, and each spawned process imports torch and vLLM again.
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    # The threads are the kit's (OMP_NUM_THREADS, from the suite's host_threads); vLLM's
    # automatic binding for the ranks of a tensor-parallel engine wants a NUMA node
    # per rank, and refuses to start on a one-node host.
    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    # The model is a local folder: a Hub lookup fails at once instead of waiting on a
    # network a conformance machine may not have.
    "HF_HUB_OFFLINE": "1",
}


@functools.cache
def exported_model(model: str, seed: int) -> str:
    """The kit's model ``model`` as a Hugging Face folder (``config.json`` and
    ``model.safetensors`` of its seeded fp32 weights), in a temporary folder removed at
    exit; a model that is already a folder is that folder."""
    config = get_model_config(model)
    if config.folder is not None:
        return config.folder
    from safetensors.torch import save_file

    folder = folder_removed_at_exit(f"conformance-{model}-seed{seed}-")
    write_model_config(model, folder)
    save_file(dict(random_weights(config, seed)), str(folder / "model.safetensors"))
    return str(folder)


def vllm_sampling_params(params: SamplingParams) -> dict:
    """Keywords of vLLM's ``SamplingParams`` for the kit's ``params``. The kit's fields
    are vLLM's, with vLLM's names, defaults and meaning (``top_k`` 0 or -1 disables it;
    ``logprobs=N`` is the sampled token and the top N of the raw distribution), so each
    is passed as it is; the engine has no tokenizer, so nothing is detokenized."""
    if not isinstance(params, SamplingParams):
        raise ValueError(f"expected the kit's SamplingParams, got {params!r}")
    params.verify()
    return {**dataclasses.asdict(params), "detokenize": False}


def kv_cache_bytes(config: ModelConfig, dtype: str, max_num_seqs: int, max_model_len: int) -> int:
    """KV-cache memory for ``max_num_seqs`` sequences of ``max_model_len`` tokens. vLLM's
    CPU worker otherwise reserves ``gpu_memory_utilization`` (0.92) of the host's memory,
    and refuses to start when that much is not free."""
    per_token = 2 * config.num_hidden_layers * config.num_key_value_heads * config.head_size
    return per_token * DTYPES[dtype].itemsize * max_num_seqs * max_model_len


class EngineStartTimedOut(TimedOut):
    """vLLM's engine did not start within the start-up allowance (``--startup-timeout``)."""


class VllmLLM:
    """``vllm.LLM`` on a bridged platform, with the reference ``LLM``'s constructor
    keywords, ``generate`` and ``shutdown``."""

    def __init__(self, model: str = "tiny", *, platform: type[VllmBridgedPlatform],
                 dtype: str = "float32", tensor_parallel_size: int = 1, block_size: int = 16,
                 max_num_seqs: int = 64, max_model_len: int | None = None, seed: int = 0,
                 distributed_executor_backend: str | None = None, kv_cache_dtype: str = "auto") -> None:
        if not (isinstance(platform, type) and issubclass(platform, VllmBridgedPlatform)):
            raise ValueError(f"vllm.LLM runs on a bridged vllm: platform, got {platform!r}")
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        if kv_cache_dtype != "auto" and kv_cache_dtype not in DTYPES:
            raise ValueError(f"kv_cache_dtype must be 'auto' or one of {', '.join(DTYPES)}, got {kv_cache_dtype!r}")
        config = get_model_config(model)
        max_model_len = max_model_len or config.max_position_embeddings
        engine_args = dict(
            model=exported_model(model, seed), skip_tokenizer_init=True, dtype=dtype, seed=seed,
            block_size=block_size, max_model_len=max_model_len, max_num_seqs=max_num_seqs,
            tensor_parallel_size=tensor_parallel_size,
            distributed_executor_backend=distributed_executor_backend,
            kv_cache_dtype=kv_cache_dtype,
            kv_cache_memory_bytes=kv_cache_bytes(config, dtype if kv_cache_dtype == "auto" else kv_cache_dtype,
                                                 max_num_seqs, max_model_len),
            # No compilation: the suite judges what the model computes, and compiling
            # would cost more than the few tokens each engine generates.
            enforce_eager=True,
            # The kit's logprobs are those of the model's raw distribution (vLLM's default).
            logprobs_mode="raw_logprobs",
        )
        self._process = ChildProcess("vllm-engine", CHILD_ENVIRONMENT)
        try:
            # Importing vLLM and building its engine is start-up: bounded by
            # --startup-timeout, not by the test's own deadline.
            with startup.starting_processes() as allowance_s:
                try:
                    self._process.call(_start_engine, platform.__qualname__, engine_args,
                                       timeout=allowance_s)
                except ChildCallTimeout:
                    raise EngineStartTimedOut(startup.timed_out_message(
                        "vLLM's engine", allowance_s) + "; its process was killed") from None
        except BaseException:
            self._process.kill()  # a timeout, Ctrl-C or a refusal: nothing to wait for
            raise

    def generate(self, prompts: dict | list[dict], sampling_params: SamplingParams | list[SamplingParams] | None = None,
                 use_tqdm: bool = True) -> list[RequestOutput]:
        """Complete every ``{"prompt_token_ids": [...]}`` prompt, in input order; a bad
        prompt or parameter raises ``ValueError`` naming it, before anything runs."""
        prompts, sampling_params = paired_requests(prompts, sampling_params)
        token_ids, params = [], []
        for i, (prompt, request) in enumerate(zip(prompts, sampling_params)):
            if not (isinstance(prompt, dict) and "prompt_token_ids" in prompt):
                raise ValueError(f"prompt {i}: the kit's model has no tokenizer, so a prompt is "
                                 f"{{'prompt_token_ids': [...]}}, got {prompt!r}")
            try:
                params.append(vllm_sampling_params(request))
            except ValueError as exc:
                raise ValueError(f"prompt {i}: {exc}") from None
            token_ids.append(list(prompt["prompt_token_ids"]))
        completions = self._process.call(_generate, token_ids, params, use_tqdm)
        return [RequestOutput(str(i), None, prompt, [_completion(completion)], True)
                for i, (prompt, completion) in enumerate(zip(token_ids, completions))]

    def shutdown(self) -> None:
        """End the engine's process (also done when the object is collected, or at
        exit). Idempotent."""
        self._process.stop()


def _completion(completion: dict) -> CompletionOutput:
    logprobs = completion["logprobs"]
    return CompletionOutput(
        index=0, text="", token_ids=completion["token_ids"],
        cumulative_logprob=completion["cumulative_logprob"],
        logprobs=None if logprobs is None else [
            {token: Logprob(logprob, rank) for token, (logprob, rank) in step.items()} for step in logprobs],
        finish_reason=completion["finish_reason"])


# -- in the engine's process ---------------------------------------------------------
_engine = None  # this process's vllm.LLM


def _start_engine(platform_name: str, engine_args: dict) -> None:
    global _engine
    from conformance.bridges.vllm import bridged

    # Makes the plugin vLLM's current platform here, as for every bridged call (vLLM's
    # own detection would pick whichever installed plugin answers).
    getattr(bridged, platform_name)
    import vllm
    from vllm.platforms import current_platform

    with recording_hook(current_platform) as calls:
        _engine = vllm.LLM(**engine_args)
    _check_ran_as_asked(_engine.llm_engine.vllm_config, engine_args,
                        [change for call in calls for change in call])


def _check_ran_as_asked(vllm_config, engine_args: dict, changes: list[ConfigChange]) -> None:
    """What vLLM's engine runs with is what the suite asked for: the dtype, the block
    size and the tensor-parallel size. A difference fails the test that asked, blamed
    on the plugin's hook where the hook made it."""
    ran = {"model_config.dtype": str(vllm_config.model_config.dtype).removeprefix("torch."),
           "cache_config.block_size": vllm_config.cache_config.block_size,
           "parallel_config.tensor_parallel_size": vllm_config.parallel_config.tensor_parallel_size}
    asked = {"model_config.dtype": engine_args["dtype"],
             "cache_config.block_size": engine_args["block_size"],
             "parallel_config.tensor_parallel_size": engine_args["tensor_parallel_size"]}
    request = (f"an engine in {asked['model_config.dtype']} with blocks of "
               f"{asked['cache_config.block_size']} on {asked['parallel_config.tensor_parallel_size']} rank(s)")
    refuse_changed(plugin_label(), changes, tuple(asked), request)
    different = [f"{field} {asked[field]!r} -> {ran[field]!r}" for field in asked if ran[field] != asked[field]]
    if different:
        raise AssertionError(
            f"vLLM's engine runs {', '.join(different)} where the suite asked for {request} "
            f"(not changed by {plugin_label()}'s check_and_update_config)")


def _generate(token_ids: list[list[int]], params: list[dict], use_tqdm: bool) -> list[dict]:
    """Plain data back to the kit: tokens, ``{token: (logprob, rank)}`` per step."""
    import vllm
    from vllm.exceptions import VLLMValidationError

    sampling_params = []
    for i, request in enumerate(params):
        try:
            sampling_params.append(vllm.SamplingParams(**request))
        except VLLMValidationError as refusal:  # a ValueError, as the reference engine's
            raise ValueError(f"prompt {i}: vLLM refuses the kit's SamplingParams({_fields(request)}): "
                             f"{refusal}") from None
    outputs = _engine.generate([vllm.TokensPrompt(prompt_token_ids=p) for p in token_ids],
                               sampling_params, use_tqdm=use_tqdm)
    completions = []
    for output in outputs:
        completion = output.outputs[0]
        completions.append({
            "token_ids": list(completion.token_ids),
            "cumulative_logprob": completion.cumulative_logprob,
            "finish_reason": completion.finish_reason,
            "logprobs": None if completion.logprobs is None else [
                {token: (lp.logprob, lp.rank) for token, lp in step.items()} for step in completion.logprobs],
        })
    return completions


def _fields(request: dict) -> str:
    """The kit's fields that differ from their defaults, as ``name=value``."""
    defaults = dataclasses.asdict(SamplingParams())
    return ", ".join(f"{k}={v!r}" for k, v in request.items() if k in defaults and defaults[k] != v)
