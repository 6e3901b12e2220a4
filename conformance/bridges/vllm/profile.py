"""The ``vllm`` mustpass profile: the contracts whose rules vLLM's own interface
promises, which judge a bridged run's verdict.

The kit's other contracts still run against a bridged plugin and are shown; a record
marks them as the kit's stricter rules (``conformance verify`` lists those not passed
without counting them). Each promise below names where vLLM makes it. Generated into
``conformance/results/mustpass-vllm.json`` beside the kit's mustpass list, so
``conformance verify`` judges a bridged record without importing the bridge
(``python -m conformance.dev regenerate`` writes it).

Each supported vLLM range (``versions.SUPPORTED_RANGES``) names the profile its runs are
judged by; a range whose interface promises differ names a profile of its own, whose
promises ``PROMISES`` holds, and each distinct profile is generated into its own file.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.bridges.vllm import versions
from conformance.results.verify import profile_path
from conformance.suites.registry import contracts, mustpass

#: The profile of the first supported range.
PROFILE = "vllm"

#: Contract id -> where vLLM's interface promises what its rule asks.
PROMISED = {
    "platform.discovery.entry_point": "vllm.platform_plugins: a zero-argument function naming the platform class",
    "platform.discovery.idempotent": "vLLM calls every plugin function during detection and again to activate it",
    "platform.discovery.no_device_init": "vllm/platforms/__init__.py: detection must not initialise a device (vLLM forks workers after it)",
    "platform.identity.device_type": "Platform.device_type: the torch device type",
    "platform.identity.dispatch_key": "Platform.dispatch_key",
    "platform.identity.dist_backend": "Platform.dist_backend: the torch.distributed backend of the device group",
    "platform.runtime.seeding": "Platform.manual_seed_all: 'Set the random seed for all devices', called by set_random_seed",
    "platform.runtime.pin_memory": "Platform.is_pin_memory_available",
    "platform.factories.communicator": "Platform.get_device_communicator_cls",
    "platform.factories.attention_backend": "Platform.get_attn_backend_cls: a backend for the selector config",
    **{f"communicator.{name}": "DeviceCommunicatorBase's collectives (barrier: GroupCoordinator.barrier)"
       for name in ("all_reduce.sum", "all_gather.dims", "reduce_scatter.dims", "gather.dst_only",
                    "broadcast.from_src", "send_recv.pairs", "send_recv.default_peers", "barrier.waits")},
    **{f"attention.{name}": "AttentionImpl.forward / do_kv_cache_update: attention over the paged cache"
       for name in ("config.accepts_declared", "forward.prefill", "forward.decode", "forward.mixed",
                    "forward.output_in_place", "forward.inputs_unchanged", "forward.successive_calls",
                    "kv_cache.write", "features.sliding_window", "numerics.fp16_long_context")},
    # Not engine.generate.sampling_params: vLLM's SamplingParams refuse a temperature
    # above 2, where the kit's filtered requests run, and a seed gives vLLM's own random
    # stream, never the reference sampler's draws the rule compares token for token.
    **{f"engine.{name}": "vllm.LLM.generate: the model's tokens and logprobs"
       for name in ("generate.fp32_greedy", "generate.half_logprobs_close", "generate.batch_invariance",
                    "generate.block_sizes", "parallel.tensor_parallel")},
}


#: Profile name -> its promises. A range whose vLLM promises differently adds its
#: profile here (e.g. ``{**PROMISED, ...}`` less what that vLLM no longer promises).
PROMISES: dict[str, dict[str, str]] = {PROFILE: PROMISED}


def profile_names() -> list[str]:
    """The distinct profiles the supported ranges name, in the ranges' order."""
    return list(dict.fromkeys(supported.profile for supported in versions.SUPPORTED_RANGES))


def profile(name: str = PROFILE) -> dict:
    if name not in PROMISES:
        raise SystemExit(f"the vllm profile {name!r} (a supported vLLM range's) has no promises "
                         "in bridges/vllm/profile.py's PROMISES")
    promised = PROMISES[name]
    known = contracts()
    unknown = sorted(promised.keys() - known.keys())
    if unknown:
        raise SystemExit(f"the {name} profile names contracts the suites do not have: {', '.join(unknown)}")
    return {**{k: v for k, v in mustpass().items() if k != "contracts"}, "profile": name,
            "contracts": {c: known[c] for c in sorted(promised)},
            "promised_by": dict(sorted(promised.items()))}


def path(name: str = PROFILE) -> Path:
    """Where the profile is shipped."""
    return profile_path(name)


def profile_text(name: str = PROFILE) -> str:
    """``mustpass-NAME.json`` as it must read."""
    return json.dumps(profile(name), indent=1) + "\n"
