"""Bad input gets a one-line ValueError naming the problem, and spoils nothing else."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conformance.reference_engine import LLM, SamplingParams
from conformance.reference_engine.platforms.cpu import CpuPlatform

GREEDY = SamplingParams(temperature=0, max_tokens=8, ignore_eos=True)
GOOD = [{"prompt_token_ids": [1, 10, 11, 12]}, "hello"]


def one_line_value_error(fn, *match: str) -> str:
    with pytest.raises(ValueError) as info:
        fn()
    message = str(info.value)
    assert "\n" not in message
    for word in match:
        assert word in message, message
    return message


def test_missing_model_folder(tmp_path):
    """Rule: a model that is neither a preset nor a folder is refused by name."""
    missing = str(tmp_path / "nowhere")
    one_line_value_error(lambda: LLM(model=missing), missing)


def test_folder_without_weights(tmp_path):
    """Rule: a folder with a config but no safetensors is refused, naming the lack."""
    (tmp_path / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 300,
    }))
    one_line_value_error(lambda: LLM(model=str(tmp_path), max_model_len=64), "safetensors")


@pytest.mark.parametrize(
    "change, named",
    [
        ({"architectures": ["MixtralForCausalLM"]}, "MixtralForCausalLM"),
        ({"num_local_experts": 8}, "mixture-of-experts"),
        ({"rope_scaling": {"type": "linear", "factor": 2.0}}, "rope_scaling"),
        ({"hidden_act": "gelu"}, "hidden_act"),
    ],
)
def test_unsupported_config(tmp_path, change, named):
    """Rule: a config the model would compute wrongly (MoE, other architectures, RoPE
    scaling, other activations) is refused before anything is built."""
    config = {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1,
              "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 300, **change}
    (tmp_path / "config.json").write_text(json.dumps(config))
    one_line_value_error(lambda: LLM(model=str(tmp_path)), named)


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"temperature": -1.0}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_k": -2}, "top_k"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": -3}, "max_tokens"),
        ({"logprobs": -1}, "logprobs"),
        ({"stop_token_ids": [-5]}, "stop_token_ids"),
    ],
)
def test_invalid_sampling_params(kwargs, named):
    """Rule: SamplingParams refuses an invalid field on construction, naming it."""
    one_line_value_error(lambda: SamplingParams(**kwargs), named)


def test_bad_request_in_a_batch(tiny_llm):
    """Rule: a bad request in a batch (too long a prompt, max_tokens changed to 0,
    tokens outside the vocabulary, an empty prompt) raises a ValueError naming it and
    its index; nothing is queued, and the engine then serves good batches as before."""
    before = [o.outputs[0].token_ids for o in tiny_llm.generate(GOOD, GREEDY)]
    broken = SamplingParams(max_tokens=4)
    broken.max_tokens = 0
    too_long = {"prompt_token_ids": [1] * 257}
    for bad, params, named in [
        (too_long, GREEDY, "max_model_len"),
        (GOOD[0], broken, "max_tokens"),
        ({"prompt_token_ids": [1, 99999]}, GREEDY, "vocabulary"),
        ({"prompt_token_ids": []}, GREEDY, "empty"),
    ]:
        message = one_line_value_error(
            lambda bad=bad, params=params: tiny_llm.generate(GOOD + [bad], [GREEDY, GREEDY, params]), named)
        assert message.startswith("prompt 2:")
        assert not tiny_llm.llm_engine.has_unfinished_requests()
    assert [o.outputs[0].token_ids for o in tiny_llm.generate(GOOD, GREEDY)] == before


def test_bad_request_added_while_others_run(tiny_llm):
    """Rule: at the engine level, a bad request added while others are running is
    refused and the running ones finish with the tokens they would have had."""
    engine = tiny_llm.llm_engine
    expected = [o.outputs[0].token_ids for o in tiny_llm.generate(GOOD[:1], GREEDY)]
    engine.add_request("good", GOOD[0]["prompt_token_ids"], GREEDY)
    engine.step()
    one_line_value_error(lambda: engine.add_request("bad", [1] * 300, GREEDY), "bad", "max_model_len")
    finished = []
    while engine.has_unfinished_requests():
        finished += engine.step()
    assert [s.request_id for s in finished] == ["good"]
    assert [finished[0].output_token_ids] == expected


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"dtype": "float64"}, "dtype"),
        ({"max_model_len": 10**6}, "max_position_embeddings"),
        ({"block_size": 0}, "block_size"),
        ({"block_size": 24}, "block size"),  # the cpu platform declares 16..128
        ({"num_kv_blocks": 2}, "KV cache"),
        ({"tensor_parallel_size": 3}, "num_attention_heads"),
        ({"distributed_executor_backend": "ray"}, "distributed_executor_backend"),
    ],
)
def test_bad_engine_arguments(make_llm, kwargs, named):
    """Rule: engine arguments the model, the platform or the cache cannot honour are
    refused with a ValueError naming the argument."""
    one_line_value_error(lambda: make_llm(**kwargs), named)


class SingleRankPlatform(CpuPlatform):
    """The cpu platform, declaring no tensor parallelism."""

    capabilities = dataclasses.replace(
        CpuPlatform.capabilities, max_world_size=1,
        features=CpuPlatform.capabilities.features - {"tensor_parallel"},
    )


def test_tensor_parallel_beyond_the_declared_world(make_llm):
    """Rule: a tensor-parallel size above the platform's declared max world size is
    refused before any rank starts, naming the limit."""
    one_line_value_error(
        lambda: make_llm(platform=SingleRankPlatform, tensor_parallel_size=2),
        "tensor_parallel_size 2", "max world size 1",
    )
