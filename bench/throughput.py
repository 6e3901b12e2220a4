"""Output tokens per second of the reference engine beside Hugging Face ``generate``.

Both run the same seeded weights (the ``small`` preset unless told otherwise) in the
same process, one after the other, on the platform's device:

  (a) one request: a 64-token prompt, 128 new tokens;
  (b) 16 requests, prompts of 16..256 tokens, 128 new tokens each.

Every figure is the median of ``--repeats`` timed runs after one warm-up. Run:
``python bench/throughput.py [--model small] [--dtypes bfloat16 float32] [--repeats 3]``;
on the cpu platform ``CONFORMANCE_CPU_KERNELS=<variant>`` runs another C kernel
variant than this host's best (the header names the one in use and its routing).
"""

from __future__ import annotations

import argparse
import os

import torch

from conformance.performance.throughput import NEW_TOKENS, engine_generate, median_rates, workloads
from conformance.reference_engine import LLM
from conformance.reference_engine.attention import cpu_attn
from conformance.reference_engine.kernels.cpu import native, ops
from conformance.reference_engine.models.config import get_model_config, to_hf_config
from conformance.reference_engine.models.loader import random_weights
from conformance.reference_engine.platforms import resolve_platform

#: The engine's default platform, which Hugging Face runs on too.
PLATFORM = resolve_platform(None)


def hf_model(model: str, dtype: torch.dtype, seed: int):
    """transformers' LlamaForCausalLM holding exactly the engine's weights."""
    import transformers

    config = get_model_config(model)
    hf_config = transformers.LlamaConfig(**to_hf_config(config), pad_token_id=0)
    hf = transformers.LlamaForCausalLM(hf_config)
    hf.load_state_dict(dict(random_weights(config, seed)), strict=not config.tie_word_embeddings)
    return hf.to(device=PLATFORM.torch_device(), dtype=dtype).eval()


def hf_generate(hf, prompts: list[list[int]]) -> int:
    """Greedy, left-padded batch, exactly NEW_TOKENS each; returns tokens generated."""
    width = max(map(len, prompts))
    ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    device = PLATFORM.torch_device()
    with torch.inference_mode():
        out = hf.generate(
            input_ids=ids.to(device), attention_mask=mask.to(device), do_sample=False,
            max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, pad_token_id=0,
        )
    return (out.shape[1] - width) * len(prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="small")
    parser.add_argument("--dtypes", nargs="+", default=["bfloat16", "float32"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", nargs="+", default=["a", "b"], choices=["a", "b"])
    args = parser.parse_args()
    torch.manual_seed(0)
    jobs = workloads(get_model_config(args.model).vocab_size)
    print(f"device: {PLATFORM.get_device_name()}, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}, median of {args.repeats}, "
          f"load average at start {os.getloadavg()[0]:.1f}")
    if PLATFORM.device_type == "cpu":
        variant = native.describe()
        rows = ops.max_rows(variant) if variant in ops.MAX_ROWS else {}
        routed = variant in cpu_attn.NATIVE_ATTENTION_VARIANTS
        print(f"C kernels: {variant} (linear: up to {rows.get(torch.bfloat16, 0)} bf16 rows, "
              f"{rows.get(torch.float16, 0)} fp16 rows; attention: {'C' if routed else 'torch'}, plain "
              f"prefills {'C' if routed and cpu_attn.prefills_in_kernel() else 'SDPA'}); "
              f"CPU flags: {' '.join(native.isa_flags())}; {ops.describe_torch()}")
    print(f"{'dtype':9} {'load':4} {'engine tok/s':>12} {'HF tok/s':>9} {'ratio':>6}")
    for dtype in args.dtypes:
        llm = LLM(model=args.model, dtype=dtype, max_model_len=512, max_num_seqs=16,
                  max_num_batched_tokens=2048)
        hf = hf_model(args.model, getattr(torch, dtype), llm.config.seed)
        print(f"engine attention backend: {llm.config.attention_backend.rpartition('.')[2]}")
        for name in args.workloads:
            ours, theirs = median_rates(
                [lambda p, llm=llm: engine_generate(llm, p), lambda p, hf=hf: hf_generate(hf, p)], jobs[name], args.repeats,
                PLATFORM.synchronize,
            )
            print(f"{dtype:9} ({name})  {ours:12.1f} {theirs:9.1f} {ours / theirs:5.2f}x", flush=True)
        llm.shutdown()
    # Two busy cores make every multi-threaded op wait on a descheduled thread: figures
    # taken under load say more about the load than about the engines.
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
