"""Weights: seeded random ones for presets, or a Hugging Face folder's safetensors.

Both come as ``(checkpoint_name, full_tensor)`` pairs on the host, and one function
copies them into the model through each parameter's ``weight_loader`` (which casts,
moves to the device and keeps this rank's shard). Random weights are drawn on the
host in fp32 from a generator seeded by (seed, name), so every platform, dtype and
tensor-parallel rank sees the same numbers.
"""

from __future__ import annotations

import glob
import os
import zlib
from collections.abc import Iterator

import torch
from torch import nn

from conformance.reference_engine.models.config import ModelConfig
from conformance.reference_engine.models.llama import PACKED

#: Standard deviation of the logits the random weights give (in units of a unit-RMS
#: hidden state): large enough that the top two tokens are rarely within rounding of
#: each other, so greedy decoding is stable across dtypes and kernels.
LOGIT_SCALE = 4.0


def checkpoint_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor of a Hugging Face Llama checkpoint of this shape, by name."""
    h, d = config.hidden_size, config.head_size
    shapes = {"model.embed_tokens.weight": (config.vocab_size, h), "model.norm.weight": (h,)}
    projections = {
        "self_attn.q_proj": (config.num_attention_heads * d, h),
        "self_attn.k_proj": (config.num_key_value_heads * d, h),
        "self_attn.v_proj": (config.num_key_value_heads * d, h),
        "self_attn.o_proj": (h, config.num_attention_heads * d),
        "mlp.gate_proj": (config.intermediate_size, h),
        "mlp.up_proj": (config.intermediate_size, h),
        "mlp.down_proj": (h, config.intermediate_size),
    }
    for i in range(config.num_hidden_layers):
        for name, shape in projections.items():
            shapes[f"model.layers.{i}.{name}.weight"] = shape
        shapes[f"model.layers.{i}.input_layernorm.weight"] = (h,)
        shapes[f"model.layers.{i}.post_attention_layernorm.weight"] = (h,)
    if not config.tie_word_embeddings:
        shapes["lm_head.weight"] = (config.vocab_size, h)
    return shapes


def random_weights(config: ModelConfig, seed: int) -> Iterator[tuple[str, torch.Tensor]]:
    """Deterministic fp32 host weights for ``config``, scaled so activations keep unit
    size through the layers (1/sqrt(fan_in)) and the logits spread by ``LOGIT_SCALE``."""
    for name, shape in checkpoint_shapes(config).items():
        generator = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(name.encode()))
        noise = torch.randn(shape, generator=generator, dtype=torch.float32)
        if name.endswith("norm.weight"):
            yield name, 1.0 + 0.1 * noise  # not all ones, so a skipped norm weight shows
        elif name in ("model.embed_tokens.weight", "lm_head.weight"):
            yield name, noise * (LOGIT_SCALE / shape[1] ** 0.5)
        else:
            yield name, noise / shape[1] ** 0.5


def safetensors_weights(folder: str) -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor of the folder's ``*.safetensors`` files (sharded or not)."""
    from safetensors import safe_open

    files = sorted(glob.glob(os.path.join(folder, "*.safetensors")))
    if not files:
        raise ValueError(f"model folder {folder!r} has no *.safetensors files")
    for path in files:
        with safe_open(path, framework="pt") as f:
            for name in f.keys():
                yield name, f.get_tensor(name)


def load_weights(model: nn.Module, weights: Iterator[tuple[str, torch.Tensor]]) -> None:
    """Copy checkpoint tensors into ``model``; refuse missing or misshapen ones."""
    params = dict(model.named_parameters())
    expected = checkpoint_shapes(model.config)
    loaded: set[str] = set()
    for name, tensor in weights:
        if "rotary_emb.inv_freq" in name:
            continue  # recomputed from rope_theta
        if name in expected and tuple(tensor.shape) != expected[name]:
            raise ValueError(
                f"checkpoint tensor {name!r} has shape {tuple(tensor.shape)}, "
                f"the config implies {expected[name]}"
            )
        target, shard_id = name, None
        for projection, (merged, shard) in PACKED.items():
            if f".{projection}." in name:
                target, shard_id = name.replace(projection, merged), shard
                break
        if target == "lm_head.weight" and model.config.tie_word_embeddings:
            continue  # the tied head is the embedding; some checkpoints store it twice
        if target not in params:
            raise ValueError(f"checkpoint tensor {name!r} matches no model parameter")
        param = params[target]
        getattr(param, "weight_loader", _copy_whole)(param, tensor, shard_id)
        loaded.add(name)
    missing = sorted(set(expected) - loaded)
    if missing:
        raise ValueError(f"checkpoint lacks {len(missing)} tensors, e.g. {missing[0]!r}")


def _copy_whole(param: nn.Parameter, full: torch.Tensor, shard_id=None) -> None:
    """Weight loader of parameters every rank holds whole (norms)."""
    param.data.copy_(full)
