"""Parity with a model nobody here wrote: Hugging Face transformers' Llama."""

from __future__ import annotations

import dataclasses
import os

import pytest
import torch

from conformance.contract.worker import ScheduledRequest, SchedulerOutput
from conformance.reference_engine import LLM, SamplingParams
from conformance.reference_engine.models.config import PRESETS, to_hf_config
from conformance.reference_engine.models.loader import random_weights

transformers = pytest.importorskip("transformers")

PROMPT = [1] + [(37 * i + 11) % 4000 + 3 for i in range(63)]  # 64 tokens


@pytest.fixture(scope="module", autouse=True)
def _offline():
    """Nothing here may reach the Hub."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


@pytest.fixture(scope="module", params=[True, False], ids=["tied", "untied"])
def hf_folder(request, tmp_path_factory):
    """The tiny preset's seeded weights, put into transformers' LlamaForCausalLM and
    written by transformers (config.json + model.safetensors)."""
    config = dataclasses.replace(PRESETS["tiny"], tie_word_embeddings=request.param)
    hf_config = transformers.LlamaConfig(**to_hf_config(config))
    model = transformers.LlamaForCausalLM(hf_config).eval()
    missing, unexpected = model.load_state_dict(dict(random_weights(config, seed=0)), strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}
    folder = tmp_path_factory.mktemp("hf_llama")
    # The untied model is written in several shards, so sharded loading is covered too.
    model.save_pretrained(folder, max_shard_size="2MB" if not request.param else "1GB")
    assert request.param or len(list(folder.glob("*.safetensors"))) > 1
    return str(folder), model


def _engine_prompt_logits(llm: LLM, prompt: list[int]) -> torch.Tensor:
    """Logits at every prompt position, from one prefill through the engine's runner."""
    runner = llm.llm_engine.executor.driver_worker.model_runner
    blocks = list(range(-(-len(prompt) // llm.config.block_size)))
    request = ScheduledRequest("parity", prompt, 0, blocks, SamplingParams(temperature=0), 0, True)
    with torch.inference_mode():
        input_ids, positions, metadata, _ = runner.prepare_inputs(SchedulerOutput([request]))
        return runner.model.compute_logits(runner.model(input_ids, positions, metadata))


def test_logits_match_transformers(hf_folder):
    """Rule: with the same weights (written by transformers, read by the engine), the
    engine's fp32 logits over a 64-token prompt are within 1e-4 of transformers'."""
    folder, hf_model = hf_folder
    llm = LLM(model=folder, dtype="float32", max_model_len=256)
    ours = _engine_prompt_logits(llm, PROMPT)
    with torch.inference_mode():
        theirs = hf_model(torch.tensor([PROMPT])).logits[0]
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().max().item() <= 1e-4
    llm.shutdown()


def test_greedy_tokens_match_transformers(hf_folder):
    """Rule: 64 greedy tokens after a 64-token prompt are identical to transformers'
    ``generate`` on the same weights."""
    folder, hf_model = hf_folder
    llm = LLM(model=folder, dtype="float32", max_model_len=256)
    out = llm.generate({"prompt_token_ids": PROMPT}, SamplingParams(temperature=0, max_tokens=64, ignore_eos=True))
    with torch.inference_mode():
        theirs = hf_model.generate(
            torch.tensor([PROMPT]), max_new_tokens=64, min_new_tokens=64, do_sample=False
        )[0, len(PROMPT):].tolist()
    assert out[0].outputs[0].token_ids == theirs
    llm.shutdown()


def test_sharded_checkpoint_and_tokenizer_json(hf_folder):
    """Rule: a folder's tokenizer.json is used (through the tokenizers library) for
    prompts and output text, and sharded safetensors load like a single file."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder, _ = hf_folder
    vocab = {"[UNK]": 0, "<s>": 1, "</s>": 2, "hello": 3, "world": 4, "again": 5}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(f"{folder}/tokenizer.json")
    try:
        llm = LLM(model=folder, dtype="float32", max_model_len=256)
        out = llm.generate("hello world again", SamplingParams(temperature=0, max_tokens=4))[0]
    finally:
        os.remove(f"{folder}/tokenizer.json")
    assert out.prompt_token_ids == [3, 4, 5]
    assert out.outputs[0].text == tokenizer.decode(out.outputs[0].token_ids, skip_special_tokens=True)
    llm.shutdown()
