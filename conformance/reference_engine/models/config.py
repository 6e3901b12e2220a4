"""``ModelConfig``: a Llama-family shape, from a preset name or a Hugging Face folder."""

from __future__ import annotations

import dataclasses
import json
import os
import re

SUPPORTED_ARCHITECTURES = ("LlamaForCausalLM",)
# config.json keys that mean a model this engine would compute wrongly if it ignored them.
_UNSUPPORTED_KEYS = {
    "num_local_experts": "mixture-of-experts",
    "num_experts": "mixture-of-experts",
    "n_routed_experts": "mixture-of-experts",
    "quantization_config": "quantized weights",
}


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    vocab_size: int
    head_dim: int | None = None
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_position_embeddings: int = 2048
    tie_word_embeddings: bool = False
    bos_token_id: int | None = 1
    eos_token_ids: tuple[int, ...] = (2,)
    architecture: str = "LlamaForCausalLM"
    #: The Hugging Face folder the weights come from; None for seeded random weights.
    folder: str | None = None

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    def check_tensor_parallel(self, size: int) -> None:
        """Raise ``ValueError`` unless every split dimension divides by ``size``."""
        for name in ("num_attention_heads", "num_key_value_heads", "intermediate_size", "vocab_size"):
            if getattr(self, name) % size:
                raise ValueError(
                    f"{name} ({getattr(self, name)}) is not divisible by tensor_parallel_size {size}"
                )


PRESETS = {
    "tiny": ModelConfig(
        hidden_size=256,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=2,
        intermediate_size=688,
        vocab_size=4096,
    ),
    "small": ModelConfig(
        hidden_size=1024,
        num_hidden_layers=8,
        num_attention_heads=16,
        num_key_value_heads=4,
        intermediate_size=2816,
        vocab_size=32000,
        max_position_embeddings=4096,
    ),
}


#: ``tiny-h<N>``: the tiny preset with attention heads of size N (a multiple of 8), for
#: platforms that declare other head sizes than the tiny preset's 32.
_TINY_VARIANT = re.compile(r"tiny-h([1-9][0-9]*)")


def tiny_variant(head_size: int) -> str:
    """The preset name of the tiny model with heads of ``head_size``."""
    return "tiny" if head_size == PRESETS["tiny"].head_size else f"tiny-h{head_size}"


def get_model_config(model: str) -> ModelConfig:
    """The preset called ``model`` (``tiny``, ``small``, or ``tiny-h<N>``), or the config
    of the Hugging Face folder ``model``."""
    if model in PRESETS:
        return PRESETS[model]
    if (variant := _TINY_VARIANT.fullmatch(model)) and int(variant[1]) % 8 == 0:
        return dataclasses.replace(PRESETS["tiny"], head_dim=int(variant[1]))
    if not os.path.isdir(model):
        raise ValueError(
            f"model {model!r} is neither a preset ({', '.join(PRESETS)}, tiny-h<N> for a head "
            "size N that is a multiple of 8) nor an existing folder"
        )
    path = os.path.join(model, "config.json")
    if not os.path.isfile(path):
        raise ValueError(f"model folder {model!r} has no config.json")
    with open(path) as f:
        return from_hf_config(json.load(f), folder=model)


def from_hf_config(hf: dict, folder: str | None = None) -> ModelConfig:
    """Translate a Hugging Face ``config.json``; refuse what the model cannot compute."""
    architectures = hf.get("architectures") or ["LlamaForCausalLM"]
    unsupported = [a for a in architectures if a not in SUPPORTED_ARCHITECTURES]
    if unsupported:
        raise ValueError(
            f"unsupported model architecture {unsupported[0]!r} "
            f"(supported: {', '.join(SUPPORTED_ARCHITECTURES)})"
        )
    for key, what in _UNSUPPORTED_KEYS.items():
        if hf.get(key):
            raise ValueError(f"unsupported model config: {what} ({key}={hf[key]!r})")
    if hf.get("rope_scaling"):
        raise ValueError(f"unsupported model config: rope_scaling={hf['rope_scaling']!r}")
    if hf.get("attention_bias") or hf.get("mlp_bias"):
        raise ValueError("unsupported model config: biases in attention or MLP projections")
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(f"unsupported model config: hidden_act={hf['hidden_act']!r}")
    eos = hf.get("eos_token_id")
    eos_ids = tuple(eos) if isinstance(eos, list) else (() if eos is None else (eos,))
    try:
        return ModelConfig(
            hidden_size=hf["hidden_size"],
            num_hidden_layers=hf["num_hidden_layers"],
            num_attention_heads=hf["num_attention_heads"],
            num_key_value_heads=hf.get("num_key_value_heads", hf["num_attention_heads"]),
            intermediate_size=hf["intermediate_size"],
            vocab_size=hf["vocab_size"],
            head_dim=hf.get("head_dim"),
            rms_norm_eps=hf.get("rms_norm_eps", 1e-6),
            rope_theta=_rope_theta(hf),
            max_position_embeddings=hf.get("max_position_embeddings", 2048),
            tie_word_embeddings=hf.get("tie_word_embeddings", False),
            bos_token_id=hf.get("bos_token_id"),
            eos_token_ids=eos_ids,
            architecture=architectures[0],
            folder=folder,
        )
    except KeyError as missing:
        raise ValueError(f"model config.json lacks the key {missing}") from None


def to_hf_config(config: ModelConfig) -> dict:
    """The ``config.json`` fields of ``config``: what ``from_hf_config`` reads back,
    and what ``transformers.LlamaConfig(**...)`` takes."""
    return {
        "architectures": [config.architecture],
        "hidden_size": config.hidden_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "intermediate_size": config.intermediate_size,
        "vocab_size": config.vocab_size,
        "head_dim": config.head_size,
        "rms_norm_eps": config.rms_norm_eps,
        "rope_theta": config.rope_theta,
        "max_position_embeddings": config.max_position_embeddings,
        "tie_word_embeddings": config.tie_word_embeddings,
        "bos_token_id": config.bos_token_id,
        "eos_token_id": list(config.eos_token_ids),
    }


def _rope_theta(hf: dict) -> float:
    # transformers >= 5 writes rope_theta inside rope_parameters.
    params = hf.get("rope_parameters") or {}
    rope_type = params.get("rope_type", "default")
    if rope_type != "default":
        raise ValueError(f"unsupported model config: rope_type={rope_type!r}")
    return float(params.get("rope_theta", hf.get("rope_theta", 10000.0)))
