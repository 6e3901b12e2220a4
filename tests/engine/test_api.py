"""The user API and the platform hooks the engine must go through."""

from __future__ import annotations

import pathlib
import re

import pytest
import torch.nn.functional as F

import conformance.reference_engine as reference_engine
from conformance.reference_engine import SamplingParams
from conformance.reference_engine.attention.cpu_attn import CpuAttentionImpl
from conformance.reference_engine.attention.oracle import OracleAttentionImpl
from conformance.reference_engine.kernels.cpu import ops as cpu_ops
from conformance.reference_engine.platforms.cpu import CpuPlatform
from conformance.reference_engine.tokenizer import ByteTokenizer

GREEDY = SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)


def test_outputs_in_input_order(tiny_llm):
    """Rule: generate returns one RequestOutput per prompt, in input order, with the
    prompt, its token ids, and the completion's tokens, text and finish reason."""
    prompts = ["a longer prompt than the others", {"prompt_token_ids": [1, 5, 6]}, "hi"]
    outputs = tiny_llm.generate(prompts, GREEDY)
    alone = [tiny_llm.generate(p, GREEDY)[0] for p in prompts]
    assert [o.outputs[0].token_ids for o in outputs] == [o.outputs[0].token_ids for o in alone]
    assert [o.prompt for o in outputs] == [prompts[0], None, "hi"]
    assert outputs[1].prompt_token_ids == [1, 5, 6]
    assert outputs[2].prompt_token_ids == ByteTokenizer(4096).encode("hi")
    completion = outputs[0].outputs[0]
    assert completion.finish_reason == "length" and len(completion.token_ids) == 6
    assert completion.text == tiny_llm.tokenizer.decode(completion.token_ids)
    assert completion.logprobs is None


def test_byte_tokenizer_round_trip():
    """Rule: the byte tokenizer encodes UTF-8 after a BOS and decodes it back."""
    tokenizer = ByteTokenizer(4096)
    text = "naïve ≠ 🙂"
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_no_device_literals_outside_platforms():
    """Rule: engine code reaches devices only through the platform it is handed: no
    torch.cuda and no "cpu"/"cuda" literals outside platforms/."""
    root = pathlib.Path(reference_engine.__file__).parent
    pattern = re.compile(r"torch\.cuda|[\"'](cpu|cuda)(:\d+)?[\"']")
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for path in root.rglob("*.py")
        if "platforms" not in path.relative_to(root).parts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


class RecordingPlatform(CpuPlatform):
    """The cpu platform, recording the hooks the engine calls and shrinking block_size."""

    calls: list[str] = []

    @classmethod
    def check_and_update_config(cls, config):
        cls.calls.append("check_and_update_config")
        super().check_and_update_config(config)
        config.block_size = 32

    @classmethod
    def get_attn_backend_cls(cls, config):
        cls.calls.append(f"get_attn_backend_cls(block_size={config.block_size})")
        return super().get_attn_backend_cls(config)

    @classmethod
    def get_worker_cls(cls):
        cls.calls.append("get_worker_cls")
        return super().get_worker_cls()


def test_platform_hooks_in_order(make_llm):
    """Rule: LLM(platform=cls) lets the platform check and adjust the config before
    anything is built, then resolves the attention backend (with the adjusted
    config) and the worker class through it."""
    RecordingPlatform.calls.clear()
    llm = make_llm(platform=RecordingPlatform)
    assert RecordingPlatform.calls == [
        "check_and_update_config", "get_attn_backend_cls(block_size=32)", "get_worker_cls",
    ]
    assert llm.config.block_size == 32
    assert llm.generate("x", GREEDY)[0].outputs[0].token_ids  # and it runs


def test_platform_class_reaches_spawned_workers(make_llm):
    """Rule: with the one-process-per-rank executor, a Platform class given to LLM is
    the platform of the worker in the spawned process too."""
    llm = make_llm(platform=RecordingPlatform, distributed_executor_backend="mp")
    assert llm.llm_engine.executor.collective_rpc(_platform_name) == ["RecordingPlatform"]


def _platform_name(worker) -> str:
    return worker.config.platform.__name__


class OraclePlatform(CpuPlatform):
    """The cpu platform on the float64 oracle's attention and torch's own linear."""

    custom_ops_module = None

    @classmethod
    def get_attn_backend_cls(cls, config):
        cls.refuse_undeclared_attention(config)
        return "conformance.reference_engine.attention.oracle.OracleAttentionBackend"


def _kernels(worker) -> tuple[set[type], set]:
    """The attention implementations and linear functions of a worker's model."""
    model = worker.model_runner.model
    impls = {layer.impl.__class__ for layer in model.attention_layers()}
    linears = {module.linear for module in model.modules() if hasattr(module, "linear")}
    return impls, linears


def test_two_engines_on_two_platforms_in_one_process(make_llm):
    """Rule: the platform is passed, not set: LLMs on two platforms in one process
    each run their own platform's attention backend and linear kernels (in this
    process and in a spawned rank), whichever was built last, and each generates."""
    settings = dict(dtype="bfloat16", num_kv_blocks=64)
    on_cpu = make_llm(platform="cpu", **settings)
    on_oracle_rank = make_llm(platform=OraclePlatform, distributed_executor_backend="mp", **settings)
    on_oracle = make_llm(platform=OraclePlatform, **settings)
    assert on_cpu.llm_engine.executor.collective_rpc(_kernels) == [
        ({CpuAttentionImpl}, {cpu_ops.linear})]
    assert on_oracle_rank.llm_engine.executor.collective_rpc(_kernels) == [
        ({OracleAttentionImpl}, {F.linear})]
    assert on_oracle.llm_engine.executor.collective_rpc(_kernels) == [
        ({OracleAttentionImpl}, {F.linear})]
    outputs = [llm.generate("two platforms", GREEDY)[0].outputs[0].token_ids
               for llm in (on_cpu, on_oracle_rank, on_oracle)]
    assert all(len(tokens) == GREEDY.max_tokens for tokens in outputs)
    assert outputs[1] == outputs[2]  # the same platform in and out of process


def test_platform_by_name(make_llm):
    """Rule: a plugin name selects that platform."""
    assert make_llm(platform="cpu").platform is CpuPlatform


def test_platform_refusal_is_a_value_error(make_llm):
    """Rule: what the platform's check_and_update_config refuses reaches the user as
    its ValueError."""
    with pytest.raises(ValueError, match="block size 8"):
        make_llm(block_size=8)


def test_collective_rpc_multiprocess(make_llm):
    """Rule: the multiprocess executor runs named methods and module-level callables
    on its rank and reports a worker's exception with its rank."""
    executor = make_llm(distributed_executor_backend="mp").llm_engine.executor
    assert executor.collective_rpc(_rank_of) == [0]
    assert executor.collective_rpc("determine_available_memory")[0] > 0
    with pytest.raises(RuntimeError, match="rank 0 .*initialize_cache"):
        executor.collective_rpc("initialize_cache", (-1,))
    assert executor.collective_rpc(_rank_of) == [0]  # still answering


def _rank_of(worker) -> int:
    return worker.rank
