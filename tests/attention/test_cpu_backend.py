"""The CPU backend in the engine, and the Triton backend on a real GPU."""

from __future__ import annotations

import pytest
import torch

from attention.conftest import requires_gpu
from conformance.reference_engine import LLM, SamplingParams
from conformance.reference_engine.platforms.cpu import CpuPlatform
from conformance.suites.attention.strategies import BatchSpec, build_batch, run_backend, run_oracle
from conformance.suites.attention.tolerances import assert_close_to_oracle

PROMPTS = ["the CPU backend", {"prompt_token_ids": list(range(3, 60))}, "a", "paged attention " * 6]


class OraclePlatform(CpuPlatform):
    """The cpu platform computing attention with the oracle."""

    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        cls.refuse_undeclared_attention(config)
        return "conformance.reference_engine.attention.oracle.OracleAttentionBackend"


def test_engine_greedy_tokens_equal_the_oracle_backends():
    """On the tiny preset in fp32, the engine on the CPU backend generates the same
    greedy tokens as on the oracle backend (prefill, chunked prefill and decode, with
    contexts past several blocks)."""
    greedy = SamplingParams(temperature=0, max_tokens=24, ignore_eos=True)
    tokens = {}
    for platform in (CpuPlatform, OraclePlatform):
        llm = LLM("tiny", dtype="float32", max_model_len=256, max_num_batched_tokens=64, platform=platform)
        try:
            assert llm.config.attention_backend.endswith(
                "CpuAttentionBackend" if platform is CpuPlatform else "OracleAttentionBackend")
            tokens[platform] = [o.outputs[0].token_ids for o in llm.generate(PROMPTS, greedy, use_tqdm=False)]
        finally:
            llm.shutdown()
    assert tokens[CpuPlatform] == tokens[OraclePlatform]


@requires_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_triton_backend_matches_oracle_on_gpu(dtype):
    """The Triton backend, compiled for the GPU, matches the oracle on a mixed batch
    with GQA, shuffled blocks and padding tokens."""
    from conformance.reference_engine.attention.triton_attn import TritonAttentionBackend

    spec = BatchSpec(query_lens=(37, 1, 5), context_lens=(0, 70, 33), num_kv_heads=2, group=4,
                     head_size=128, block_size=16, dtype=dtype, padding_tokens=2, seed=3)
    batch = build_batch(spec, TritonAttentionBackend, torch.device("cuda"))
    output, _ = run_backend(TritonAttentionBackend, batch)
    assert_close_to_oracle(output, run_oracle(batch), dtype, "triton on gpu")
