"""The Llama family: RMSNorm, RoPE, grouped-query attention, SwiGLU MLP.

Parameter names follow Hugging Face checkpoints except for the merged projections
(``qkv_proj`` and ``gate_up_proj``, see ``PACKED``), so a checkpoint loads by name.
The forward pass takes a flat batch (all requests' new tokens end to end) as vLLM's.
``ops`` holds the platform's kernels for the per-token ops, handed to every layer.
"""

from __future__ import annotations

import torch
from torch import nn

from conformance.contract.attention import AttentionBackend, AttentionMetadata
from conformance.reference_engine.layers.activation import SiluAndMul
from conformance.reference_engine.layers.attention import Attention
from conformance.reference_engine.layers.custom_ops import CustomOps
from conformance.reference_engine.layers.embedding import ParallelLMHead, VocabParallelEmbedding
from conformance.reference_engine.layers.layernorm import RMSNorm
from conformance.reference_engine.layers.linear import (
    MergedColumnParallelLinear,
    QKVParallelLinear,
    RowParallelLinear,
)
from conformance.reference_engine.layers.parallel import TensorParallel
from conformance.reference_engine.layers.rotary import RotaryEmbedding
from conformance.reference_engine.models.config import ModelConfig

#: Checkpoint projection -> (merged parameter, shard id).
PACKED = {
    "q_proj": ("qkv_proj", "q"),
    "k_proj": ("qkv_proj", "k"),
    "v_proj": ("qkv_proj", "v"),
    "gate_proj": ("gate_up_proj", 0),
    "up_proj": ("gate_up_proj", 1),
}


class LlamaAttention(nn.Module):
    def __init__(
        self, config: ModelConfig, backend: type[AttentionBackend], tp: TensorParallel,
        rotary_emb: RotaryEmbedding, ops: CustomOps,
    ):
        super().__init__()
        head_size = config.head_size
        self.num_heads = tp.shard(config.num_attention_heads, "num_attention_heads")
        self.num_kv_heads = tp.shard(config.num_key_value_heads, "num_key_value_heads")
        self.head_size = head_size
        self.qkv_proj = QKVParallelLinear(
            config.hidden_size, head_size, config.num_attention_heads, config.num_key_value_heads, tp,
            ops.linear,
        )
        self.o_proj = RowParallelLinear(
            config.num_attention_heads * head_size, config.hidden_size, tp, ops.linear
        )
        self.rotary_emb = rotary_emb
        self.attn = Attention(backend, self.num_heads, head_size, self.num_kv_heads)

    def forward(self, positions, hidden_states, metadata: AttentionMetadata) -> torch.Tensor:
        qkv = self.qkv_proj(hidden_states).view(-1, self.num_heads + 2 * self.num_kv_heads, self.head_size)
        qk = self.rotary_emb(positions, qkv[:, : self.num_heads + self.num_kv_heads])
        q, k = qk.split([self.num_heads, self.num_kv_heads], dim=1)
        v = qkv[:, self.num_heads + self.num_kv_heads :]
        return self.o_proj(self.attn(q, k, v, metadata))


class LlamaMLP(nn.Module):
    def __init__(self, config: ModelConfig, tp: TensorParallel, ops: CustomOps):
        super().__init__()
        size = config.intermediate_size
        self.gate_up_proj = MergedColumnParallelLinear(config.hidden_size, [size, size], tp, ops.linear)
        self.down_proj = RowParallelLinear(size, config.hidden_size, tp, ops.linear)
        self.act_fn = SiluAndMul(ops.silu_and_mul)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act_fn(self.gate_up_proj(x)))


class LlamaDecoderLayer(nn.Module):
    def __init__(
        self, config: ModelConfig, backend: type[AttentionBackend], tp: TensorParallel,
        rotary_emb: RotaryEmbedding, ops: CustomOps,
    ):
        super().__init__()
        self.self_attn = LlamaAttention(config, backend, tp, rotary_emb, ops)
        self.mlp = LlamaMLP(config, tp, ops)
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps, ops.rms_norm)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps, ops.rms_norm)

    def forward(self, positions, hidden_states, residual, metadata):
        if residual is None:
            residual = hidden_states
            hidden_states = self.input_layernorm(hidden_states)
        else:
            hidden_states, residual = self.input_layernorm(hidden_states, residual)
        hidden_states = self.self_attn(positions, hidden_states, metadata)
        hidden_states, residual = self.post_attention_layernorm(hidden_states, residual)
        return self.mlp(hidden_states), residual


class LlamaModel(nn.Module):
    def __init__(
        self, config: ModelConfig, backend: type[AttentionBackend], tp: TensorParallel, ops: CustomOps
    ):
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding(config.vocab_size, config.hidden_size, tp)
        # Shared by all layers, which lets it look each step's positions up once.
        rotary_emb = RotaryEmbedding(
            config.head_size, config.max_position_embeddings, config.rope_theta, ops.rotary_embedding
        )
        self.layers = nn.ModuleList(
            LlamaDecoderLayer(config, backend, tp, rotary_emb, ops)
            for _ in range(config.num_hidden_layers)
        )
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps, ops.rms_norm)

    def forward(self, input_ids, positions, metadata) -> torch.Tensor:
        hidden_states, residual = self.embed_tokens(input_ids), None
        for layer in self.layers:
            hidden_states, residual = layer(positions, hidden_states, residual, metadata)
        hidden_states, _ = self.norm(hidden_states, residual)
        return hidden_states


class LlamaForCausalLM(nn.Module):
    def __init__(
        self, config: ModelConfig, backend: type[AttentionBackend], tp: TensorParallel,
        ops: CustomOps,
    ):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config, backend, tp, ops)
        self.lm_head = ParallelLMHead(config.vocab_size, config.hidden_size, tp, ops.linear)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(
        self, input_ids: torch.Tensor, positions: torch.Tensor, metadata: AttentionMetadata
    ) -> torch.Tensor:
        """Final hidden states ``[num_tokens, hidden]`` of a flat batch."""
        return self.model(input_ids, positions, metadata)

    def compute_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden_states)

    def attention_layers(self) -> list[Attention]:
        return [layer.self_attn.attn for layer in self.model.layers]
