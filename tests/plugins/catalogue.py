"""Which test plugin breaks which contract, and how to install them for a run."""

from __future__ import annotations

from pathlib import Path

#: Correct plugins: the suites must pass them completely (what they do not declare is
#: ``not_supported``, never a failure or an error).
GOOD = {
    "narrow_bf16": "kit_test_plugins.narrow:NarrowBf16Platform.plugin",
    "narrow_fp16": "kit_test_plugins.narrow:NarrowFp16Platform.plugin",
    "narrow_block128": "kit_test_plugins.narrow:NarrowBlock128Platform.plugin",
    "cast_cache": "kit_test_plugins.narrow:CastCachePlatform.plugin",
}

#: Correct plugins whose only difference from ``cpu`` is in these suites: run on them alone.
GOOD_IN_SUITES = {
    # The cpu platform renamed, from a third-party distribution: what it could change
    # is discovery and identity (``test_cli`` runs every suite on ``cpu`` itself).
    "good_cpu": ("kit_test_plugins:GoodPlatform.plugin", "platform"),
    "zeroed_tail_reading": ("kit_test_plugins.attention:ZeroedTailReadingPlatform.plugin",
                            "attention,engine"),
}

#: How many broken plugins of each suite share one child process in the catalogue's
#: tests: about a minute of one core per batch, so that under ``-n 2`` no batch is
#: left running alone at the end.
BATCH_SIZE = {"platform": 16, "attention": 4, "communicator": 5, "worker": 4, "engine": 4}

#: Broken plugins: entry point, the suite that must catch it, and exactly the
#: contracts that suite must fail.
BROKEN = {
    "flip_flopping": (
        "kit_test_plugins.discovery:flip_flopping",
        "platform",
        {"platform.discovery.entry_point", "platform.discovery.idempotent"},
    ),
    "unknown_device_type": (
        "kit_test_plugins.identity:UnknownDeviceTypePlatform.plugin",
        "platform",
        # Nothing can be allocated on a device torch does not know, so every rule
        # that needs a tensor on the device fails with it.
        {"platform.identity.device_type", "platform.identity.dispatch_key",
         "platform.capabilities.dtypes_compute", "platform.runtime.synchronize",
         "platform.runtime.events", "platform.runtime.memory", "platform.runtime.seeding",
         "platform.runtime.current_device", "platform.runtime.mem_get_info",
         "platform.custom_ops.match_reference"},
    ),
    "stale_residual_ops": (
        "kit_test_plugins.custom_ops:StaleResidualPlatform.plugin",
        "platform",
        {"platform.custom_ops.match_reference"},
    ),
    "short_rotary_ops": (
        "kit_test_plugins.short_rotary_ops:ShortRotaryPlatform.plugin",
        "platform",
        {"platform.custom_ops.match_reference"},
    ),
    "cached_rotary_ops": (
        "kit_test_plugins.cached_rotary_ops:CachedRotaryPlatform.plugin",
        "platform",
        # New positions for an earlier batch's token count and dtype: only the rounds of
        # the same shapes with new values get there.
        {"platform.custom_ops.match_reference"},
    ),
    "reused_buffer_ops": (
        "kit_test_plugins.reused_buffer_ops:ReusedBufferPlatform.plugin",
        "platform",
        # Each result is right when returned: only the check after later calls sees it.
        {"platform.custom_ops.match_reference"},
    ),
    "in_place_rms_norm_ops": (
        "kit_test_plugins.in_place_ops:InPlaceRmsNormPlatform.plugin",
        "platform",
        # Its results are right: only the comparison of the inputs sees it.
        {"platform.custom_ops.match_reference"},
    ),
    "packed_rows_ops": (
        "kit_test_plugins.packed_rows_ops:PackedRowsPlatform.plugin",
        "platform",
        # Right on packed rows: only the views with strided rows see it.
        {"platform.custom_ops.match_reference"},
    ),
    "flat_linear_ops": (
        "kit_test_plugins.flat_linear_ops:FlatLinearPlatform.plugin",
        "platform",
        # Right on [tokens, hidden]: only the [2, rows, hidden] input sees it.
        {"platform.custom_ops.match_reference"},
    ),
    "fixed_eps_ops": (
        "kit_test_plugins.fixed_eps_ops:FixedEpsPlatform.plugin",
        "platform",
        # Right wherever the mean square dwarfs the eps: only the small rows see it.
        {"platform.custom_ops.match_reference"},
    ),
    "half_square_ops": (
        "kit_test_plugins.half_square_ops:HalfSquarePlatform.plugin",
        "platform",
        # Right in float32 and on rows of unit scale: only float16's small and large rows see it.
        {"platform.custom_ops.match_reference"},
    ),
    "missing_ops_module": (
        "kit_test_plugins.custom_ops:MissingOpsModulePlatform.plugin",
        "platform",
        # Nothing to compare when the module does not import.
        {"platform.custom_ops.importable", "platform.custom_ops.match_reference"},
    ),
    "wrong_dispatch_key": (
        "kit_test_plugins.identity:WrongDispatchKeyPlatform.plugin",
        "platform",
        {"platform.identity.dispatch_key"},
    ),
    "missing_dist_backend": (
        "kit_test_plugins.identity:MissingDistBackendPlatform.plugin",
        "platform",
        {"platform.identity.dist_backend"},
    ),
    "renamed_attention_module": (
        "kit_test_plugins.factories:RenamedAttentionModulePlatform.plugin",
        "platform",
        {"platform.factories.attention_backend"},
    ),
    "constant_memory": (
        "kit_test_plugins.runtime:ConstantMemoryPlatform.plugin",
        "platform",
        {"platform.runtime.memory"},
    ),
    "reserved_memory": (
        "kit_test_plugins.runtime:ReservedMemoryPlatform.plugin",
        "platform",
        # One large tensor is mapped and unmapped on its own: only small ones show it.
        {"platform.runtime.memory"},
    ),
    "overstated_free_memory": (
        "kit_test_plugins.runtime:OverstatedFreeMemoryPlatform.plugin",
        "platform",
        {"platform.runtime.mem_get_info"},
    ),
    "unseeded": (
        "kit_test_plugins.runtime:UnseededPlatform.plugin",
        "platform",
        {"platform.runtime.seeding"},
    ),
    "zero_seed_ignored": (
        "kit_test_plugins.runtime:ZeroSeedIgnoredPlatform.plugin",
        "platform",
        {"platform.runtime.seeding"},
    ),
    "kilobyte_memory_info": (
        "kit_test_plugins.runtime:KilobyteMemoryInfoPlatform.plugin",
        "platform",
        # Consistent and positive: only the total against a tensor's size sees the unit.
        {"platform.runtime.mem_get_info"},
    ),
    "seconds_event": (
        "kit_test_plugins.runtime:SecondsEventPlatform.plugin",
        "platform",
        # Ordered and non-negative: only the host's wait sees the unit.
        {"platform.runtime.events"},
    ),
    "stuck_event": (
        "kit_test_plugins.runtime:StuckEventPlatform.plugin",
        "platform",
        {"platform.runtime.events", "platform.runtime.synchronize"},
    ),
    "dishonest_pin_memory": (
        "kit_test_plugins.runtime:DishonestPinMemoryPlatform.plugin",
        "platform",
        {"platform.runtime.pin_memory"},
    ),
    "str_current_device": (
        "kit_test_plugins.runtime:StrCurrentDevicePlatform.plugin",
        "platform",
        {"platform.runtime.current_device"},
    ),
    "stuck_current_device": (
        "kit_test_plugins.runtime:StuckCurrentDevicePlatform.plugin",
        "platform",
        {"platform.runtime.current_device"},
    ),
    "missing_worker": (
        "kit_test_plugins.factories:MissingWorkerPlatform.plugin",
        "platform",
        {"platform.factories.worker"},
    ),
    "not_a_communicator": (
        "kit_test_plugins.factories:NotACommunicatorPlatform.plugin",
        "platform",
        {"platform.factories.communicator"},
    ),
    "unrefusing_attention": (
        "kit_test_plugins.factories:UnrefusingAttentionPlatform.plugin",
        "platform",
        {"platform.factories.attention_refusal"},
    ),
    "any_architecture": (
        "kit_test_plugins.config_hooks:AnyArchitecturePlatform.plugin",
        "platform",
        # check_and_update_config relies on verify_model_arch, so it breaks too.
        {"platform.config.model_arch", "platform.config.check_and_update"},
    ),
    "refusing_second_block_size": (
        "kit_test_plugins.config_hooks:RefusingSecondBlockSizePlatform.plugin",
        "platform",
        {"platform.config.check_and_update"},
    ),
    "any_kv_cache_dtype": (
        "kit_test_plugins.config_hooks:AnyKvCacheDtypePlatform.plugin",
        "platform",
        {"platform.config.check_and_update"},
    ),
    "any_quantization": (
        "kit_test_plugins.config_hooks:AnyQuantizationPlatform.plugin",
        "platform",
        {"platform.config.quantization"},
    ),
    "range_checked_declaration": (
        "kit_test_plugins.config_hooks:RangeCheckedDeclarationPlatform.plugin",
        "platform",
        # Only sizes below or between the declared ones get through: each probe above
        # the largest, the only kind the suites drew before, is still refused.
        {"platform.factories.attention_refusal", "platform.config.check_and_update"},
    ),
    "local_all_reduce": (
        "kit_test_plugins.communicator:LocalAllReducePlatform.plugin",
        "communicator",
        {"communicator.all_reduce.sum"},
    ),
    "replayed_all_reduce": (
        "kit_test_plugins.communicator:ReplayedAllReducePlatform.plugin",
        "communicator",
        {"communicator.all_reduce.sum"},
    ),
    "reversed_all_gather": (
        "kit_test_plugins.communicator:ReversedAllGatherPlatform.plugin",
        "communicator",
        {"communicator.all_gather.dims"},
    ),
    "staging_buffer_all_gather": (
        "kit_test_plugins.communicator:StagingBufferAllGatherPlatform.plugin",
        "communicator",
        # Each result is right when returned: only the check after later calls sees it.
        {"communicator.all_gather.dims"},
    ),
    "staging_buffer_collectives": (
        "kit_test_plugins.communicator:StagingBufferCollectivesPlatform.plugin",
        "communicator",
        # Every collective that returns a tensor; the ring's receives are one per dtype,
        # so no buffer of it is reused.
        {"communicator.all_reduce.sum", "communicator.all_gather.dims",
         "communicator.reduce_scatter.dims", "communicator.gather.dst_only",
         "communicator.broadcast.from_src", "communicator.send_recv.pairs"},
    ),
    "replayed_collectives": (
        "kit_test_plugins.communicator:ReplayedCollectivesPlatform.plugin",
        "communicator",
        # Every collective with an input, once a call signature comes back a sixth time:
        # only the tests of many calls on one shape get there.
        {"communicator.all_reduce.sum", "communicator.all_gather.dims",
         "communicator.reduce_scatter.dims", "communicator.gather.dst_only",
         "communicator.broadcast.from_src", "communicator.send_recv.pairs"},
    ),
    "first_dim_reduce_scatter": (
        "kit_test_plugins.communicator:FirstDimReduceScatterPlatform.plugin",
        "communicator",
        {"communicator.reduce_scatter.dims"},
    ),
    "contiguous_assuming_collectives": (
        "kit_test_plugins.communicator:ContiguousAssumingCollectivesPlatform.plugin",
        "communicator",
        # Right on tensors of their own: only the calls on strided views see it.
        {"communicator.all_reduce.sum", "communicator.all_gather.dims",
         "communicator.reduce_scatter.dims", "communicator.gather.dst_only",
         "communicator.broadcast.from_src", "communicator.send_recv.pairs"},
    ),
    "every_rank_gather": (
        "kit_test_plugins.communicator:EveryRankGatherPlatform.plugin",
        "communicator",
        {"communicator.gather.dst_only"},
    ),
    "rank_zero_broadcast": (
        "kit_test_plugins.communicator:RankZeroBroadcastPlatform.plugin",
        "communicator",
        {"communicator.broadcast.from_src"},
    ),
    "first_dim_defaults": (
        "kit_test_plugins.communicator:FirstDimDefaultsPlatform.plugin",
        "communicator",
        # Every call that gives ``dim`` is right: only the calls that leave it out fail.
        {"communicator.all_gather.dims", "communicator.reduce_scatter.dims"},
    ),
    "last_rank_roots": (
        "kit_test_plugins.communicator:LastRankRootsPlatform.plugin",
        "communicator",
        # Every call that gives ``dst`` or ``src`` is right: only the calls that leave it
        # out fail.
        {"communicator.gather.dst_only", "communicator.broadcast.from_src"},
    ),
    "next_rank_send": (
        "kit_test_plugins.communicator:NextRankSendPlatform.plugin",
        "communicator",
        {"communicator.send_recv.pairs"},
    ),
    "non_waiting_barrier": (
        "kit_test_plugins.communicator:NonWaitingBarrierPlatform.plugin",
        "communicator",
        {"communicator.barrier.waits"},
    ),
}

#: Communicator plugins whose failure is an outcome of its own: the contract that
#: must end with it, and the outcome.
MISBEHAVING_COMMUNICATORS = {
    "hanging_all_reduce": (
        "kit_test_plugins.communicator:HangingAllReducePlatform.plugin",
        "communicator.all_reduce.sum",
        "timed_out",
    ),
    "crashing_gather": (
        "kit_test_plugins.communicator:CrashingGatherPlatform.plugin",
        "communicator.gather.dst_only",
        "crashed",
    ),
}

#: Tests left out of a misbehaving communicator's run: each hang costs a whole rank
#: timeout, so the hanging all_reduce runs one of its contract's tests (at worlds 2
#: and 4: two hangs, not six) beside every test of the other contracts.
MISBEHAVING_SELECTION = {"hanging_all_reduce": ("-k", "not all_reduce or sums_over_ranks")}

#: Broken attention backends (suite "attention"): each the cpu backend with one bug.
BROKEN.update({
    "attention_no_causal_mask": (
        "kit_test_plugins.attention:NoCausalMaskPlatform.plugin", "attention",
        # Every batch with a multi-token request, except the near-uniform fp16 one.
        {"attention.forward.prefill", "attention.forward.mixed", "attention.forward.output_in_place",
         "attention.features.logits_soft_cap", "attention.features.sliding_window", "attention.forward.successive_calls"}),
    "attention_unscaled_softmax": (
        "kit_test_plugins.attention:UnscaledSoftmaxPlatform.plugin", "attention",
        # Every output check, except the near-uniform fp16 one, where scale barely matters.
        {"attention.forward.prefill", "attention.forward.decode", "attention.forward.mixed",
         "attention.forward.output_in_place", "attention.features.logits_soft_cap",
         "attention.features.sliding_window", "attention.forward.successive_calls"}),
    "attention_modulo_gqa": (
        "kit_test_plugins.attention:ModuloGqaPlatform.plugin", "attention",
        # Every output check drawing 2 KV heads with 2+ query heads each (the fixed
        # cases use one KV head, where modulo and division agree).
        {"attention.forward.prefill", "attention.forward.decode", "attention.forward.mixed", "attention.features.logits_soft_cap", "attention.features.sliding_window", "attention.forward.successive_calls"}),
    "attention_first_block_decode": (
        "kit_test_plugins.attention:FirstBlockDecodePlatform.plugin", "attention",
        # Every output check with a decode past the first block.
        {"attention.forward.decode", "attention.forward.mixed", "attention.numerics.fp16_long_context",
         "attention.features.logits_soft_cap", "attention.features.sliding_window", "attention.forward.successive_calls"}),
    "attention_off_by_one_slot": (
        "kit_test_plugins.attention:OffByOneSlotPlatform.plugin", "attention",
        # Cache writes, and every output that reads a new token back from the cache
        # (a plain prefill reads its own keys and values, not the cache).
        {"attention.kv_cache.write", "attention.forward.decode",
         "attention.forward.mixed", "attention.forward.output_in_place",
         "attention.numerics.fp16_long_context", "attention.features.logits_soft_cap", "attention.features.sliding_window", "attention.forward.successive_calls"}),
    "attention_query_scaled_in_place": (
        "kit_test_plugins.attention:QueryScaledInPlacePlatform.plugin", "attention",
        # Its outputs are right: the oracle sees the query as it was given.
        {"attention.forward.inputs_unchanged"}),
    "attention_contiguous_strides": (
        "kit_test_plugins.attention:ContiguousStridesPlatform.plugin", "attention",
        # Right on tensors of their own: only the batches of fused QKV views see it,
        # in the output and in the cache.
        {"attention.forward.mixed", "attention.kv_cache.write"}),
    "attention_key_strides_for_value": (
        "kit_test_plugins.attention:KeyStridesForValuePlatform.plugin", "attention",
        # Right while key and value share a layout: only the q/k-normed batches (a key
        # of its own beside a value view of the fused projection) see it.
        {"attention.forward.mixed", "attention.kv_cache.write"}),
    "attention_packed_heads_assumed": (
        "kit_test_plugins.attention:PackedHeadsAssumedPlatform.plugin", "attention",
        # Right while a token's query heads are packed: only the per-KV-head layout of
        # a fused projection, with a KV head per query head, sees it (in the output).
        {"attention.forward.mixed"}),
    "attention_padding_only_after_real_tokens": (
        "kit_test_plugins.attention:PaddingOnlyAfterRealTokensPlatform.plugin", "attention",
        # Only slots of -1 inside num_actual_tokens reach its write.
        {"attention.kv_cache.write"}),
    "attention_stale_plan": (
        "kit_test_plugins.attention:StalePlanPlatform.plugin", "attention",
        # Every other test builds one impl per batch; only a kept impl replays a plan.
        {"attention.forward.successive_calls"}),
    "attention_shape_keyed_plan": (
        "kit_test_plugins.attention:ShapeKeyedPlanPlatform.plugin", "attention",
        # Only the successive steps repeat a shape on one impl, with other requests.
        {"attention.forward.successive_calls"}),
    "attention_captured_output": (
        "kit_test_plugins.attention:CapturedOutputPlatform.plugin", "attention",
        # Each output is right when returned: only the successive steps keep an earlier
        # output and repeat its shape on one impl.
        {"attention.forward.successive_calls"}),
    "attention_shape_keyed_slots": (
        "kit_test_plugins.attention:ShapeKeyedSlotsPlatform.plugin", "attention",
        # Every output is right: only the successive steps' cache check sees the writes.
        {"attention.forward.successive_calls"}),
    "attention_key_cast_in_place": (
        "kit_test_plugins.attention:KeyCastInPlacePlatform.plugin", "attention",
        # Its outputs and cache writes are right: only the comparison of the inputs,
        # on a batch whose cache is narrower than its model dtype, sees it.
        {"attention.forward.inputs_unchanged"}),
    "attention_bf16_staged_cache_write": (
        "kit_test_plugins.attention:Bf16StagedCacheWritePlatform.plugin", "attention",
        # Cache writes, and every output read from a cache of another dtype than the
        # model's (the covering batches pair every cache dtype with every model dtype);
        # the fixed batches keep the cache in the model dtype.
        {"attention.kv_cache.write", "attention.forward.prefill", "attention.forward.decode",
         "attention.forward.mixed", "attention.features.logits_soft_cap", "attention.features.sliding_window"}),
    "attention_tail_reading": (
        "kit_test_plugins.attention:TailReadingPlatform.plugin", "attention",
        {"attention.kv_cache.unowned_slots"}),
    "attention_ignored_sliding_window": (
        "kit_test_plugins.attention:IgnoredSlidingWindowPlatform.plugin", "attention",
        {"attention.features.sliding_window"}),
    "attention_fp16_accumulation": (
        "kit_test_plugins.attention:Fp16AccumulationPlatform.plugin", "attention",
        {"attention.numerics.fp16_long_context"}),
    "attention_unwritten_cache": (
        "kit_test_plugins.attention:UnwrittenCachePlatform.plugin", "attention",
        # Cache writes, and every output that reads a new token back from the cache
        # (a plain prefill reads its own keys and values, not the cache).
        {"attention.kv_cache.write", "attention.forward.decode", "attention.forward.mixed",
         "attention.forward.output_in_place", "attention.numerics.fp16_long_context", "attention.features.logits_soft_cap", "attention.features.sliding_window", "attention.forward.successive_calls"}),
})

#: Broken workers (suite "worker"): each the generic Worker with one bug.
BROKEN.update({
    "worker_overstated_memory": (
        "kit_test_plugins.worker:OverstatedMemoryWorkerPlatform.plugin", "worker",
        # Twice the device is above the device and above any fraction of it.
        {"worker.memory.available_bounds", "worker.memory.fraction"}),
    "worker_unstable_memory": (
        "kit_test_plugins.worker:UnstableMemoryWorkerPlatform.plugin", "worker",
        {"worker.memory.stable"}),
    "worker_seed_ignoring": (
        "kit_test_plugins.worker:SeedIgnoringWorkerPlatform.plugin", "worker",
        # The filtered step's requests are seeded too.
        {"worker.execute.seeded_sampling", "worker.execute.sampling_params"}),
    "worker_entropy_seeded": (
        "kit_test_plugins.worker:EntropySeededWorkerPlatform.plugin", "worker",
        {"worker.execute.seeded_sampling"}),
    "worker_filter_ignoring": (
        "kit_test_plugins.worker:FilterIgnoringWorkerPlatform.plugin", "worker",
        {"worker.execute.sampling_params"}),
    "worker_top_k_one_unfiltered": (
        "kit_test_plugins.worker:TopKOneUnfilteredWorkerPlatform.plugin", "worker",
        # Only the narrowest top_k (1, at temperature 5) reaches its bug.
        {"worker.execute.sampling_params"}),
    "worker_top_k_as_count": (
        "kit_test_plugins.worker:TopKAsCountWorkerPlatform.plugin", "worker",
        # top_k=-1 and a top_k beyond the vocabulary raise in the filtered step, which
        # the lifecycle's test reads too: the worker did not complete every call.
        {"worker.execute.sampling_params", "worker.lifecycle.in_process"}),
    "worker_logprobs_zero_dropped": (
        "kit_test_plugins.worker:LogprobsZeroDroppedWorkerPlatform.plugin", "worker",
        {"worker.execute.sampling_params"}),
    "worker_half_temperature": (
        "kit_test_plugins.worker:HalfTemperatureWorkerPlatform.plugin", "worker",
        # Only the near-zero temperature overflows float16.
        {"worker.execute.sampling_params"}),
    "worker_stale_tokens": (
        "kit_test_plugins.worker:StaleTokensWorkerPlatform.plugin", "worker",
        # Every step sampling a request sampled the step before (the repeated seeded
        # step samples the same tokens anyway); the rank process runs the same steps.
        {"worker.execute.decode", "worker.execute.mixed", "worker.lifecycle.multiprocess"}),
    "worker_first_token_logits": (
        "kit_test_plugins.worker:FirstTokenLogitsWorkerPlatform.plugin", "worker",
        # Every step sampling after a prefill chunk: the prefill, the mixed step that
        # ends one, the seeded prefills (in float32 they must match the reference
        # exactly), and the same steps in the rank process. Decodes are right.
        {"worker.execute.prefill", "worker.execute.mixed", "worker.execute.seeded_sampling",
         "worker.execute.sampling_params", "worker.lifecycle.multiprocess"}),
    "worker_leaking": (
        "kit_test_plugins.worker:LeakingWorkerPlatform.plugin", "worker",
        {"worker.memory.shutdown_releases"}),
})

#: The same workers seen by the Engine suite (suite "engine"): what they do to generation.
BROKEN.update({
    "engine_stale_tokens": (
        "kit_test_plugins.worker:StaleTokensWorkerPlatform.plugin", "engine",
        # Every token comes out twice, in every dtype, block size and world size, and
        # when sampled; alone or in a batch it does so the same way.
        {"engine.generate.fp32_greedy", "engine.generate.half_logprobs_close",
         "engine.generate.block_sizes", "engine.generate.sampling_params",
         "engine.parallel.tensor_parallel"}),
    "engine_seed_ignoring": (
        "kit_test_plugins.worker:SeedIgnoringWorkerPlatform.plugin", "engine",
        # Greedy generation is unaffected; a seeded request samples differently in a
        # batch, and the seeded filtered requests differ from the reference's.
        {"engine.generate.batch_invariance", "engine.generate.sampling_params"}),
    "engine_filter_ignoring": (
        "kit_test_plugins.worker:FilterIgnoringWorkerPlatform.plugin", "engine",
        {"engine.generate.sampling_params"}),
    "engine_logprobs_zero_dropped": (
        "kit_test_plugins.worker:LogprobsZeroDroppedWorkerPlatform.plugin", "engine",
        {"engine.generate.sampling_params"}),
    "engine_refusing_second_block_size": (
        "kit_test_plugins.config_hooks:RefusingSecondBlockSizePlatform.plugin", "engine",
        {"engine.generate.block_sizes"}),
})

#: Correct plugins run with TRITON_INTERPRET=1: the Attention suite must pass them.

BROKEN.update({
    "nameless_device": (
        "kit_test_plugins.identity:NamelessDevicePlatform.plugin", "platform",
        {"platform.identity.names"},
    ),
    "no_devices": (
        "kit_test_plugins.runtime:NoDevicesPlatform.plugin", "platform",
        {"platform.runtime.availability"},
    ),
    "reversed_ring": (
        "kit_test_plugins.communicator:ReversedRingPlatform.plugin", "communicator",
        {"communicator.send_recv.default_peers"},
    ),
    "accepting_everything_attention": (
        "kit_test_plugins.attention:AcceptingEverythingPlatform.plugin", "attention",
        {"attention.config.refuses_undeclared"},
    ),
    "attention_non_positive_window": (
        "kit_test_plugins.attention:NonPositiveWindowPlatform.plugin", "attention",
        {"attention.config.refuses_undeclared"},
    ),
    "refusing_declared_head_size": (
        "kit_test_plugins.attention:RefusingHeadSize256Platform.plugin", "attention",
        {"attention.config.accepts_declared"},
    ),
    "transposed_kv_cache_shape": (
        "kit_test_plugins.attention:TransposedKvCacheShapePlatform.plugin", "attention",
        # Every test allocates its cache with the reported shape, which the kernels
        # then misread: only the refusal checks survive.
        {"attention.kv_cache.shape", "attention.kv_cache.write", "attention.forward.prefill",
         "attention.forward.decode", "attention.forward.mixed", "attention.forward.inputs_unchanged",
         "attention.forward.output_in_place", "attention.features.sliding_window",
         "attention.features.logits_soft_cap", "attention.numerics.deterministic",
         "attention.numerics.fp16_long_context", "attention.forward.successive_calls",
         "attention.kv_cache.unowned_slots"},
    ),
    "worker_drifted_signature": (
        "kit_test_plugins.worker:DriftedSignatureWorkerPlatform.plugin", "worker",
        # The engine's call sequence breaks at check_health, so no step it drives
        # completes: every rule observed through a driven worker fails with it.
        {"worker.rpc.methods", "worker.lifecycle.in_process", "worker.lifecycle.multiprocess",
         "worker.execute.prefill", "worker.execute.decode", "worker.execute.mixed",
         "worker.execute.seeded_sampling", "worker.execute.sampling_params",
         "worker.memory.available_bounds",
         "worker.memory.stable"},
    ),
})

INTERPRETED = {"triton_interpreted": "kit_test_plugins.attention:TritonInterpretedPlatform.plugin"}

#: Plugins that crash or hang in exactly one Platform-suite test, and its contract.
ISOLATED = {
    "crashing_stream": ("kit_test_plugins.runtime:CrashingStreamPlatform.plugin",
                        "platform.runtime.stream"),
    "hanging_pin_memory": ("kit_test_plugins.runtime:HangingPinMemoryPlatform.plugin",
                           "platform.runtime.pin_memory"),
}

#: Plugins that hang; runs against them are killed by the tests.
HANGING = {"hanging_synchronize": "kit_test_plugins.runtime:HangingSynchronizePlatform.plugin"}

#: Plugins whose declaration is refused before any test runs (``pytest --platform``
#: exits with a usage error), the contract that refusal enforces, and the words of its
#: one line.
REFUSED = {
    "malformed_capabilities": (
        "kit_test_plugins.capabilities:MalformedCapabilitiesPlatform.plugin",
        "platform.capabilities.well_formed",
        "block size 24 is not a positive power of two; "
        "unknown feature 'sliding_windw' (did you mean 'sliding_window'?)",
    ),
}

#: Plugins that must not even start a run, and the words their one-line error has.
UNLOADABLE = {
    "raising": ("kit_test_plugins.raising:plugin", "RuntimeError: vendor runtime library"),
    "not_a_platform": (
        "kit_test_plugins.discovery:not_a_platform", "not a subclass of conformance.Platform"),
    "unavailable": ("kit_test_plugins.discovery:unavailable", "not usable on this machine"),
    "missing_class": ("kit_test_plugins.discovery:missing_class", "does not import"),
}

PLUGIN_SOURCES = Path(__file__).parent


def write_distribution(site: Path, name: str, version: str, entry_points: dict[str, str]) -> None:
    """Make ``site`` hold an installed distribution registering ``entry_points`` as
    platform plugins: what ``pip install`` of a plugin package leaves behind."""
    dist_info = site / f"{name}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    )
    lines = [f"{plugin} = {target}" for plugin, target in entry_points.items()]
    (dist_info / "entry_points.txt").write_text(
        "[conformance.platform_plugins]\n" + "\n".join(lines) + "\n"
    )


def all_entry_points() -> dict[str, str]:
    entries = dict(GOOD)
    entries.update({name: target for name, (target, _) in GOOD_IN_SUITES.items()})
    entries.update({name: target for name, (target, _, _) in BROKEN.items()})
    entries.update({name: target for name, (target, _) in UNLOADABLE.items()})
    entries.update({name: target for name, (target, _, _) in REFUSED.items()})
    entries.update(HANGING)
    entries.update({name: target for name, (target, _) in ISOLATED.items()})
    entries.update({name: target for name, (target, _, _) in MISBEHAVING_COMMUNICATORS.items()})
    entries.update(INTERPRETED)
    return entries
