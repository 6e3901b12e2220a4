"""Triton ops against the torch layers of the reference engine."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from attention.conftest import requires_gpu

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
TOL = {torch.float32: 1e-5, torch.bfloat16: 2e-2, torch.float16: 2e-3}


def _torch_rms_norm(x, weight, eps):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def check_ops(device, dtype):
    from conformance.reference_engine.kernels import elementwise
    from conformance.reference_engine.layers.rotary import RotaryEmbedding

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(5, 48, generator=gen).to(device, dtype)
    residual = torch.randn(5, 48, generator=gen).to(device, dtype)
    weight = torch.rand(48, generator=gen).to(device, dtype)
    tol = dict(atol=TOL[dtype], rtol=TOL[dtype])
    torch.testing.assert_close(elementwise.rms_norm(x, weight, 1e-6), _torch_rms_norm(x, weight, 1e-6), **tol)
    fused_residual = residual.clone()
    out = elementwise.rms_norm(x, weight, 1e-6, residual=fused_residual)
    torch.testing.assert_close(fused_residual, x + residual, **tol)
    torch.testing.assert_close(out, _torch_rms_norm(x + residual, weight, 1e-6), **tol)

    rope = RotaryEmbedding(32, 64, 10000.0).to(device)  # no kernel: the torch layer
    positions = torch.tensor([0, 5, 63, 7], device=device)
    q = torch.randn(4, 3, 32, generator=gen).to(device, dtype)
    torch.testing.assert_close(elementwise.rotary_embedding(positions, q, rope.cos, rope.sin),
                               rope(positions, q), **tol)

    gate_up = torch.randn(3, 2 * 40, generator=gen).to(device, dtype)
    gate, up = gate_up.chunk(2, dim=-1)
    torch.testing.assert_close(elementwise.silu_and_mul(gate_up), (F.silu(gate.float()) * up.float()).to(dtype), **tol)


def check_engine_interpreted():
    from kit_test_plugins.attention import TritonOpsInterpretedPlatform

    from conformance.reference_engine import LLM, SamplingParams

    prompts = [{"prompt_token_ids": [5, 17, 300, 42, 9]}, {"prompt_token_ids": [7] * 20}]
    params = SamplingParams(max_tokens=4, temperature=0.0, ignore_eos=True)
    reference = LLM(model="tiny", dtype="float32", platform="cpu").generate(prompts, params)
    llm = LLM(model="tiny", dtype="float32", platform=TritonOpsInterpretedPlatform)
    model = llm.llm_engine.executor.driver_worker.model_runner.model
    layer = model.model.layers[0]
    kernels = (layer.input_layernorm.kernel, layer.self_attn.rotary_emb.kernel, layer.mlp.act_fn.kernel)
    assert all(k.__module__ == "conformance.reference_engine.kernels.elementwise" for k in kernels), kernels
    outputs = llm.generate(prompts, params)
    assert [o.outputs[0].token_ids for o in outputs] == [o.outputs[0].token_ids for o in reference]


def check_split_decode(device, dtype, context_lens, **features):
    """A decode batch through the Triton backend, split along the context, against
    the float64 oracle."""
    from conformance.reference_engine.attention.triton_attn import TritonAttentionBackend
    from conformance.suites.attention.strategies import BatchSpec, build_batch, run_backend, run_oracle
    from conformance.suites.attention.tolerances import assert_close_to_oracle

    spec = BatchSpec(query_lens=(1,) * len(context_lens), context_lens=context_lens, num_kv_heads=2, group=3,
                     head_size=64, block_size=16, dtype=dtype, padding_tokens=1, seed=5, **features)
    batch = build_batch(spec, TritonAttentionBackend, device)
    output, _ = run_backend(TritonAttentionBackend, batch)
    assert_close_to_oracle(output, run_oracle(batch), dtype, f"split decode {features}")


def check_split_decode_interpreted():
    from conformance.reference_engine.kernels import attention

    attention.MIN_SEGMENT_KEYS = 32  # split these short contexts into 2 to 8 segments
    assert attention._num_segments(3, 2, 1, 300) == 8
    for features in ({}, {"sliding_window": 40}, {"logits_soft_cap": 5.0}):
        check_split_decode(torch.device("cpu"), torch.float32, (300, 20, 131), **features)


def check_ops_interpreted():
    for dtype in DTYPES:
        check_ops(torch.device("cpu"), dtype)


def test_engine_runs_on_the_triton_ops_interpreted(run_interpreted):
    """A platform naming the Triton ops as its ``custom_ops_module`` gets them in every
    layer, and its greedy tokens equal the torch layers' (tiny preset, fp32)."""
    run_interpreted("attention.test_triton_ops:check_engine_interpreted")


def test_split_decode_matches_oracle_interpreted(run_interpreted):
    """A decode batch split along the context (segments merged after) equals the
    oracle, with segments that are empty, partial, or wholly outside a sliding
    window, and with a logits soft cap."""
    run_interpreted("attention.test_triton_ops:check_split_decode_interpreted")


@requires_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_split_decode_matches_oracle_on_gpu(dtype):
    """On a GPU, a few long decodes are split by the default rule and match the oracle."""
    from conformance.reference_engine.kernels import attention

    assert attention._num_segments(3, 2, 1, 3000) > 1
    check_split_decode(torch.device("cuda"), dtype, (3000, 700, 2047), sliding_window=None)


def test_elementwise_ops_match_torch_interpreted(run_interpreted):
    """RMSNorm (plain and with the fused residual add), RoPE and SiLU-and-mul equal
    the engine's torch layers in every dtype, under the interpreter."""
    run_interpreted("attention.test_triton_ops:check_ops_interpreted")


@requires_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_ops_match_torch_on_gpu(dtype):
    """The same ops, compiled for the GPU, equal the engine's torch layers."""
    check_ops(torch.device("cuda"), dtype)
