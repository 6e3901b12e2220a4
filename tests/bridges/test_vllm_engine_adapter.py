"""The Engine suite's vLLM adapter without vLLM: which engine a platform is judged in,
the sampling parameters handed to vLLM, and the model folder vLLM loads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from conformance.bridges.vllm import engine
from conformance.bridges.vllm.platform import VllmBridgedPlatform
from conformance.contract.discovery import load_platform
from conformance.contract.sampling_params import SamplingParams
from conformance.reference_engine.llm import LLM
from conformance.reference_engine.models.config import get_model_config
from conformance.reference_engine.models.loader import random_weights
from conformance.suites.engine.generations import FILTERED_REQUESTS, GREEDY, engine_for


class Bridged(VllmBridgedPlatform):
    vllm_platform = object()


def test_a_plugin_is_judged_in_the_reference_engine():
    assert load_platform("cpu").engine_cls() is None
    assert engine_for(load_platform("cpu")) is LLM


def test_a_bridged_platform_is_judged_in_vllm():
    assert engine_for(Bridged) is engine.VllmLLM


@pytest.mark.parametrize("params", [GREEDY, *FILTERED_REQUESTS], ids=repr)
def test_sampling_params_pass_as_vllm_names_them(params):
    """Every field of the kit's SamplingParams, unchanged, under its (vLLM's) name."""
    converted = engine.vllm_sampling_params(params)
    assert converted == {**{f.name: getattr(params, f.name) for f in dataclasses.fields(params)},
                         "detokenize": False}


def test_invalid_sampling_params_are_one_line():
    params = SamplingParams(top_k=3)
    params.top_k = -7  # changed after construction, as the reference engine also guards
    with pytest.raises(ValueError, match=r"^invalid SamplingParams: top_k must be .*-7$"):
        engine.vllm_sampling_params(params)
    with pytest.raises(ValueError, match=r"^expected the kit's SamplingParams, got \{'temperature': 0\}$"):
        engine.vllm_sampling_params({"temperature": 0})


def test_a_platform_outside_the_bridge_is_refused():
    with pytest.raises(ValueError, match=r"^vllm\.LLM runs on a bridged vllm: platform, got <class"):
        engine.VllmLLM(platform=load_platform("cpu"))


def test_export_is_the_reference_engine_s_model():
    """The folder vLLM loads reads back as the kit's model, with the seeded weights
    the reference engine draws, and is made once per (model, seed)."""
    folder = Path(engine.exported_model("tiny", 3))
    hf_config = json.loads((folder / "config.json").read_text())
    assert hf_config["model_type"] == "llama" and hf_config["architectures"] == ["LlamaForCausalLM"]
    tiny = get_model_config("tiny")
    assert get_model_config(str(folder)) == dataclasses.replace(tiny, head_dim=tiny.head_size, folder=str(folder))
    weights = load_file(folder / "model.safetensors")
    expected = dict(random_weights(tiny, 3))
    assert weights.keys() == expected.keys()
    assert all(torch.equal(weights[name], tensor) for name, tensor in expected.items())
    assert engine.exported_model("tiny", 3) == str(folder)
    assert engine.exported_model("tiny", 4) != str(folder)


def test_a_model_folder_is_loaded_as_it_is():
    folder = engine.exported_model("tiny", 3)
    assert engine.exported_model(folder, 0) == folder


def test_the_kv_cache_holds_every_sequence_at_full_length():
    # tiny: 4 layers, 2 KV heads of 32; a key and a value per token.
    assert engine.kv_cache_bytes(get_model_config("tiny"), "bfloat16", 8, 128) == 2 * 4 * 2 * 32 * 2 * 8 * 128
