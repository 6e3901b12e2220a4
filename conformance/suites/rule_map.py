"""Which contracts check each method of the plugin contract.

Every public method of the contract's interfaces is listed here with the contracts
whose tests can fail it, or, for the few whose effect nothing outside the plugin can
observe, in ``UNOBSERVABLE`` with the reason. The kit's own tests hold this table to
the contract (a method in neither, or a method whose docstring states a rule but is
called unobservable, fails them) and to the suites (every id named here exists), so
a rule cannot be added without the check that enforces it.

Finer audits sit beside it: ``clause_map`` maps every clause of every rule to what can
fail it, ``families`` every property a family of methods shares to its check in each
member. ``python -m conformance.suites.rule_map --clauses`` (or ``--families``) prints
either table in Markdown.
"""

from __future__ import annotations

import argparse
import sys

_FORWARD = (
    "attention.forward.prefill", "attention.forward.decode", "attention.forward.mixed",
    "attention.forward.output_in_place", "attention.forward.inputs_unchanged",
    "attention.forward.successive_calls", "attention.kv_cache.unowned_slots",
    "attention.kv_cache.write", "attention.numerics.deterministic",
    "attention.numerics.fp16_long_context", "attention.features.sliding_window",
    "attention.features.logits_soft_cap",
)
_DRIVEN = ("worker.lifecycle.in_process", "worker.lifecycle.multiprocess")
_EXECUTE = ("worker.execute.prefill", "worker.execute.decode", "worker.execute.mixed",
            "worker.execute.seeded_sampling", "worker.execute.sampling_params",
            "engine.generate.sampling_params", "engine.generate.block_sizes")

CHECKED_BY: dict[str, tuple[str, ...]] = {
    "Platform.is_available": ("platform.runtime.availability",),
    "Platform.device_count": ("platform.runtime.availability", "platform.runtime.current_device"),
    "Platform.set_device": ("platform.runtime.current_device",),
    "Platform.current_device": ("platform.runtime.current_device",),
    "Platform.get_device_name": ("platform.identity.names",),
    "Platform.get_device_capability": ("platform.identity.names",),
    "Platform.get_device_total_memory": ("platform.runtime.mem_get_info",),
    "Platform.mem_get_info": ("platform.runtime.mem_get_info",),
    "Platform.memory_allocated": ("platform.runtime.memory", "worker.memory.shutdown_releases"),
    "Platform.synchronize": ("platform.runtime.synchronize",),
    "Platform.Event": ("platform.runtime.events",),
    "Platform.Stream": ("platform.runtime.stream",),
    "Platform.empty_cache": ("platform.runtime.memory",),
    "Platform.manual_seed_all": ("platform.runtime.seeding",),
    "Platform.seed_everything": ("platform.runtime.seeding",),
    "Platform.is_pin_memory_available": ("platform.runtime.pin_memory",),
    "Platform.inference_mode": _DRIVEN,
    "Platform.get_attn_backend_cls": ("platform.factories.attention_backend",
                                      "platform.factories.attention_refusal"),
    "Platform.get_worker_cls": ("platform.factories.worker",),
    "Platform.get_device_communicator_cls": ("platform.factories.communicator",),
    # The engine it names generates every completion the Engine suite judges.
    "Platform.engine_cls": ("engine.generate.fp32_greedy", "engine.generate.half_logprobs_close",
                            "engine.generate.block_sizes", "engine.generate.sampling_params",
                            "engine.generate.batch_invariance", "engine.parallel.tensor_parallel"),
    "Platform.check_and_update_config": ("platform.config.check_and_update",),
    "Platform.verify_model_arch": ("platform.config.model_arch",),
    "Platform.verify_quantization": ("platform.config.quantization",),
    "Platform.refuse_undeclared_attention": ("platform.factories.attention_refusal",),
    "Platform.torch_device": ("platform.identity.device_type",),
    "AttentionBackend.get_name": ("attention.config.accepts_declared",),
    "AttentionBackend.get_impl_cls": ("attention.forward.prefill",),
    "AttentionBackend.get_kv_cache_shape": ("attention.kv_cache.shape",),
    "AttentionBackend.validate_configuration": ("attention.config.accepts_declared",
                                                "attention.config.refuses_undeclared"),
    "AttentionImpl.forward": _FORWARD,
    "WorkerBase.init_device": _DRIVEN,
    "WorkerBase.load_model": _DRIVEN,
    "WorkerBase.determine_available_memory": ("worker.memory.available_bounds",
                                              "worker.memory.stable", "worker.memory.fraction"),
    "WorkerBase.initialize_cache": _DRIVEN,
    "WorkerBase.execute_model": _EXECUTE,
    "WorkerBase.check_health": ("worker.rpc.methods", *_DRIVEN),
    "WorkerBase.shutdown": ("worker.memory.shutdown_releases",),
    "DeviceCommunicatorBase.all_reduce": ("communicator.all_reduce.sum",),
    "DeviceCommunicatorBase.all_gather": ("communicator.all_gather.dims",),
    "DeviceCommunicatorBase.reduce_scatter": ("communicator.reduce_scatter.dims",),
    "DeviceCommunicatorBase.gather": ("communicator.gather.dst_only",),
    "DeviceCommunicatorBase.broadcast": ("communicator.broadcast.from_src",),
    "DeviceCommunicatorBase.send": ("communicator.send_recv.pairs", "communicator.send_recv.default_peers"),
    "DeviceCommunicatorBase.recv": ("communicator.send_recv.pairs", "communicator.send_recv.default_peers"),
    "DeviceCommunicatorBase.barrier": ("communicator.barrier.waits",),
}

UNOBSERVABLE: dict[str, str] = {
    "DeviceCommunicatorBase.destroy": "releases resources only the plugin knows of; the "
    "default does nothing, and any outcome short of raising is allowed",
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.suites.rule_map",
                                     description="Print an audit table of the contract in Markdown.")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--clauses", action="store_true", help="every clause of every rule, with what can fail it")
    which.add_argument("--families", action="store_true", help="every family property, by member, with its check")
    args = parser.parse_args(argv)
    from conformance.suites import clause_map, families

    if args.families:
        sys.stdout.write(families.table())
    elif args.clauses:
        sys.stdout.write(clause_map.table())
    else:
        rows = ["| method | checked by |", "|---|---|"]
        rows += [f"| `{method}` | {', '.join(f'`{c}`' for c in ids)} |" for method, ids in CHECKED_BY.items()]
        rows += [f"| `{method}` | unobservable: {why} |" for method, why in UNOBSERVABLE.items()]
        sys.stdout.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
