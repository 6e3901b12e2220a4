"""Which tests can fail each clause of each rule of the contract.

A rule (``conformance.contract.rules``) often promises several things; the rule audit
at the level of contracts would pass a rule whose tests check only its first promise.
Here every clause of every rule names the contracts (all of whose tests can fail it)
or the single tests (``suite/test_module.py::test_function``) that can fail it, and
``tests/test_clause_audit.py`` fails on a clause this table does not map.

A clause is what ``clauses`` splits a rule's text into: a sentence, or a part of one
between semicolons, where the full stop or semicolon stands outside parentheses and
``code``. A parenthesis qualifies the clause it stands in (a range, a unit, an
example), and code is not prose: neither is split off, so each clause maps with the
qualifiers it states. Each entry starts with a cue, words its clause contains: a rule
whose clauses change no longer matches its entries, and the audit asks for them again.

``python -m conformance.suites.rule_map --clauses`` prints this table in Markdown.
"""

from __future__ import annotations

from conformance.contract.rules import rule_texts
from conformance.suites import registry


def clauses(text: str) -> list[str]:
    """The clauses of a rule's text, in order (see the module's docstring)."""
    found, start, depth, in_code, i = [], 0, 0, False, 0
    while i < len(text):
        if text.startswith("``", i):
            in_code, i = not in_code, i + 2
            continue
        if not in_code:
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
            elif text[i] in ".;" and depth == 0 and text[i + 1:i + 2] in ("", " "):
                found.append(text[start:i + 1].strip())
                start = i + 1
        i += 1
    return found + ([rest] if (rest := text[start:].strip()) else [])


#: Per contract, one entry per clause of its rule, in order: a cue the clause contains,
#: then what can fail it (a contract id: every test of it; or one test).
CLAUSES: dict[str, tuple[tuple[str, ...], ...]] = {
    "attention.config.accepts_declared": (
        ('``validate_configuration`` returns no reasons for', 'attention.config.accepts_declared'),
    ),
    "attention.config.refuses_undeclared": (
        ('a configuration outside the declared', 'attention.config.refuses_undeclared'),
        ('logits soft cap that is not positive', 'attention.config.refuses_undeclared'),
    ),
    "attention.features.logits_soft_cap": (
        ('with a soft cap ``c``', 'attention.features.logits_soft_cap'),
    ),
    "attention.features.sliding_window": (
        ('with a sliding window ``w``', 'attention.features.sliding_window'),
    ),
    "attention.forward.decode": (
        ('requests of one new token', 'attention.forward.decode'),
    ),
    "attention.forward.inputs_unchanged": (
        ('``forward`` leaves ``query``, ``key`` and', 'attention.forward.inputs_unchanged'),
    ),
    "attention.forward.mixed": (
        ('prefill, chunked-prefill and decode requests', 'attention.forward.mixed'),
        ('with the cache in each declared KV-cache dtype', 'attention.forward.prefill',
         'attention.forward.decode', 'attention.forward.mixed'),
        ('non-contiguous views of one fused projection', 'attention/test_forward.py::test_mixed_on_fused_qkv_views'),
        ('tensors of their own beside a ``value``', 'attention/test_forward.py::test_mixed_on_fused_qkv_views'),
        ('laid out per KV head', 'attention/test_forward.py::test_mixed_on_fused_qkv_views'),
    ),
    "attention.forward.output_in_place": (
        ('``forward`` writes the result into', 'attention.forward.output_in_place'),
    ),
    "attention.forward.prefill": (
        ('requests with no context (variable', 'attention.forward.prefill'),
    ),
    "attention.forward.successive_calls": (
        ('one impl serves every step', 'attention.forward.successive_calls'),
        ("and an earlier call's output", 'attention.forward.successive_calls'),
    ),
    "attention.kv_cache.shape": (
        ('``get_kv_cache_shape(num_blocks, block_size, num_kv_heads, head_size)`` is', 'attention.kv_cache.shape'),
    ),
    "attention.kv_cache.unowned_slots": (
        ('the result does not depend', 'attention.kv_cache.unowned_slots'),
        # The engine's zeroing shows only in what it generates on a declaring platform.
        ('A backend that needs those', 'attention.kv_cache.unowned_slots', 'engine.generate.fp32_greedy'),
    ),
    "attention.kv_cache.write": (
        ("after ``forward``, every real token's", 'attention.kv_cache.write'),
        ('padding tokens (slot -1) and', 'attention.kv_cache.write'),
        ('non-contiguous views of one fused projection', 'attention/test_kv_cache.py::test_cache_writes_from_fused_qkv_views'),
        ('So is a key of its own beside a value', 'attention/test_kv_cache.py::test_cache_writes_from_fused_qkv_views'),
        ('laid out per KV head', 'attention/test_kv_cache.py::test_cache_writes_from_fused_qkv_views'),
        ('A token whose slot is -1',
         'attention/test_kv_cache.py::test_tokens_of_slot_minus_one_among_the_real_ones_are_not_written'),
    ),
    "attention.numerics.deterministic": (
        ('the same batch on the', 'attention.numerics.deterministic'),
    ),
    "attention.numerics.fp16_long_context": (
        ('in fp16, positive values near', 'attention.numerics.fp16_long_context'),
    ),
    "communicator.all_gather.dims": (
        ("``all_gather(x, dim)`` returns every rank's", 'communicator.all_gather.dims'),
        ('and a returned tensor keeps', 'communicator.all_gather.dims'),
        ('Without ``dim``, ``all_gather(x)`` gathers', 'communicator/test_all_gather.py::test_all_gather_without_dim_gathers_along_the_last'),
        ('may be a non-contiguous view', 'communicator/test_all_gather.py::test_all_gather_on_strided_views'),
    ),
    "communicator.all_reduce.sum": (
        ('``all_reduce`` returns the element-wise sum', 'communicator.all_reduce.sum'),
        ('and a returned tensor keeps', 'communicator.all_reduce.sum'),
        ('may be a non-contiguous view', 'communicator/test_all_reduce.py::test_all_reduce_on_strided_views'),
    ),
    "communicator.barrier.waits": (
        ('no rank leaves ``barrier()`` before', 'communicator.barrier.waits'),
    ),
    "communicator.broadcast.from_src": (
        ("``broadcast(x, src)`` writes rank ``src``'s", 'communicator.broadcast.from_src'),
        ('and a returned tensor keeps', 'communicator.broadcast.from_src'),
        ('Without ``src``, ``broadcast(x)`` sends', 'communicator/test_broadcast.py::test_broadcast_without_src_sends_from_rank_zero'),
        ('may be a non-contiguous view', 'communicator/test_broadcast.py::test_broadcast_on_strided_views'),
    ),
    "communicator.gather.dst_only": (
        ('``gather(x, dst, dim)`` returns the', 'communicator.gather.dst_only'),
        ('and a returned tensor keeps', 'communicator.gather.dst_only'),
        ('Without ``dim``, ``gather(x, dst)`` concatenates', 'communicator/test_gather.py::test_gather_without_dst_or_dim_collects_on_rank_zero_along_the_last'),
        ('may be a non-contiguous view', 'communicator/test_gather.py::test_gather_on_strided_views'),
    ),
    "communicator.reduce_scatter.dims": (
        ('``reduce_scatter(x, dim)`` gives rank ``i``', 'communicator.reduce_scatter.dims'),
        ('and a returned tensor keeps', 'communicator.reduce_scatter.dims'),
        ('Without ``dim``, ``reduce_scatter(x)`` scatters', 'communicator/test_reduce_scatter.py::test_reduce_scatter_without_dim_scatters_along_the_last'),
        ('may be a non-contiguous view', 'communicator/test_reduce_scatter.py::test_reduce_scatter_on_strided_views'),
    ),
    "communicator.send_recv.default_peers": (
        ('without peers, ``send`` goes to', 'communicator.send_recv.default_peers'),
    ),
    "communicator.send_recv.pairs": (
        ('``send(x, dst)`` on one rank', 'communicator.send_recv.pairs'),
        ('and a returned tensor keeps', 'communicator.send_recv.pairs'),
        ('may be a non-contiguous view', 'communicator/test_send_recv.py::test_send_recv_on_strided_views'),
    ),
    "engine.generate.batch_invariance": (
        ('a request generates the same', 'engine.generate.batch_invariance'),
    ),
    "engine.generate.block_sizes": (
        ('greedy generation in every other', 'engine.generate.block_sizes'),
    ),
    "engine.generate.fp32_greedy": (
        ('in float32, greedy generation of', 'engine.generate.fp32_greedy'),
    ),
    "engine.generate.half_logprobs_close": (
        ('in bfloat16 and float16, greedy', 'engine.generate.half_logprobs_close'),
    ),
    "engine.generate.sampling_params": (
        ('seeded requests with temperature, ``top_k``', 'engine.generate.sampling_params'),
        ('the logprobs of the chosen', 'engine.generate.sampling_params'),
        ('Each parameter means what ``SamplingParams``', 'engine.generate.sampling_params'),
    ),
    "engine.parallel.tensor_parallel": (
        ('where the plugin declares ``tensor_parallel``', 'engine.parallel.tensor_parallel'),
        ('several processes may set the', 'engine.parallel.tensor_parallel'),
    ),
    "platform.capabilities.dtypes_compute": (
        ('every declared dtype can hold', 'platform.capabilities.dtypes_compute'),
    ),
    "platform.capabilities.well_formed": (
        ('``capabilities`` is a ``PlatformCapabilities`` whose', 'platform.capabilities.well_formed'),
    ),
    "platform.config.check_and_update": (
        ('a config of every declared', 'platform.config.check_and_update'),
        ('a dtype, KV-cache dtype, block', 'platform.config.check_and_update'),
    ),
    "platform.config.model_arch": (
        ('``verify_model_arch`` accepts every declared architecture', 'platform.config.model_arch'),
    ),
    "platform.config.quantization": (
        ('``verify_quantization`` accepts None and every', 'platform.config.quantization'),
    ),
    "platform.custom_ops.importable": (
        ('when ``custom_ops_module`` is set, the', 'platform.custom_ops.importable'),
    ),
    "platform.custom_ops.match_reference": (
        ('each op the module defines', 'platform.custom_ops.match_reference'),
        ('each returns its result in', 'platform.custom_ops.match_reference'),
        ('a call that repeats an', 'platform.custom_ops.match_reference'),
        ('each leaves its inputs as', 'platform.custom_ops.match_reference'),
        ('and a returned tensor keeps', 'platform.custom_ops.match_reference'),
        ('``rms_norm`` uses the eps', 'platform.custom_ops.match_reference'),
    ),
    "platform.discovery.entry_point": (
        ('the entry point is a', 'platform.discovery.entry_point'),
    ),
    "platform.discovery.idempotent": (
        ('calling the entry point again', 'platform.discovery.idempotent'),
    ),
    "platform.discovery.no_device_init": (
        ('loading the entry point and', 'platform.discovery.no_device_init'),
    ),
    "platform.factories.attention_backend": (
        ('for every declared configuration, the', 'platform.factories.attention_backend'),
    ),
    "platform.factories.attention_refusal": (
        ('for a head size, dtype', 'platform.factories.attention_refusal'),
    ),
    "platform.factories.communicator": (
        ('``get_device_communicator_cls()`` names an importable, concrete', 'platform.factories.communicator'),
    ),
    "platform.factories.worker": (
        ('``get_worker_cls()`` names an importable, concrete', 'platform.factories.worker'),
    ),
    "platform.identity.device_type": (
        ('``device_type`` is a device type', 'platform.identity.device_type'),
    ),
    "platform.identity.dispatch_key": (
        ('``dispatch_key`` names a PyTorch dispatch', 'platform.identity.dispatch_key'),
    ),
    "platform.identity.dist_backend": (
        ('``dist_backend`` is a ``torch.distributed`` backend', 'platform.identity.dist_backend'),
    ),
    "platform.identity.names": (
        ('``device_name`` and ``get_device_name()`` are non-empty', 'platform.identity.names'),
    ),
    "platform.runtime.availability": (
        ('``is_available()`` returns (never raises) True', 'platform.runtime.availability'),
    ),
    "platform.runtime.current_device": (
        ('after ``set_device(torch.device(device_type, i))``, ``current_device()`` returns', 'platform.runtime.current_device'),
    ),
    "platform.runtime.events": (
        ('after its own ``synchronize()`` a', 'platform.runtime.events'),
        ('with timing enabled, ``elapsed_time`` between', 'platform.runtime.events'),
        ('it is in milliseconds, as', 'platform/test_runtime.py::test_event_timing_is_in_milliseconds'),
    ),
    "platform.runtime.mem_get_info": (
        ('``mem_get_info()`` is ``(free, total)`` with', 'platform.runtime.mem_get_info'),
        ('both are bytes: the total', 'platform.runtime.mem_get_info'),
    ),
    "platform.runtime.memory": (
        ('``memory_allocated()`` grows by at least', 'platform.runtime.memory'),
        ('it counts live tensors, not what an allocator keeps',
         'platform/test_runtime.py::test_memory_allocated_counts_live_small_tensors'),
    ),
    "platform.runtime.pin_memory": (
        ('when ``is_pin_memory_available()`` is True, ``tensor.pin_memory()``', 'platform.runtime.pin_memory'),
    ),
    "platform.runtime.seeding": (
        ('the same seed, given to', 'platform.runtime.seeding'),
        ('Seed 0, the engine', 'platform.runtime.seeding'),
    ),
    "platform.runtime.stream": (
        ('``Stream()`` returns a new object', 'platform.runtime.stream'),
    ),
    "platform.runtime.synchronize": (
        ('after ``synchronize()``, every event recorded', 'platform.runtime.synchronize'),
    ),
    "worker.execute.decode": (
        ('successive decode steps return, per', 'worker.execute.decode'),
    ),
    "worker.execute.mixed": (
        ('a batch mixing a chunked', 'worker.execute.mixed'),
    ),
    "worker.execute.prefill": (
        ('a batch of prefills returns', 'worker.execute.prefill'),
    ),
    "worker.execute.sampling_params": (
        ('seeded requests with temperature, ``top_k``', 'worker.execute.sampling_params'),
        ('in float32 each picks the', 'worker.execute.sampling_params'),
        ('Each parameter means what ``SamplingParams``', 'worker.execute.sampling_params'),
    ),
    "worker.execute.seeded_sampling": (
        ('a request with a seed', 'worker.execute.seeded_sampling'),
        ('a request without one draws from',
         'worker/test_execute.py::test_unseeded_sampling_repeats_under_the_engine_seed'),
    ),
    "worker.lifecycle.in_process": (
        ('driven in process in the', 'worker.lifecycle.in_process'),
    ),
    "worker.lifecycle.multiprocess": (
        ("driven through the engine's one-process-per-rank", 'worker.lifecycle.multiprocess'),
    ),
    "worker.memory.available_bounds": (
        ('after loading the model it', 'worker.memory.available_bounds'),
    ),
    "worker.memory.fraction": (
        ('with ``config.memory_fraction`` f, it is', 'worker.memory.fraction'),
    ),
    "worker.memory.shutdown_releases": (
        ('after ``shutdown()`` (the worker object', 'worker.memory.shutdown_releases'),
    ),
    "worker.memory.stable": (
        ('asked twice in a row', 'worker.memory.stable'),
    ),
    "worker.rpc.methods": (
        ('every method an executor calls', 'worker.rpc.methods'),
    ),
}


def _target_exists(target: str) -> bool:
    if "::" in target:
        return registry.contract_of_nodeid(target) is not None
    return target in registry.contracts()


def problems() -> list[str]:
    """Every clause of the contract's rules this table does not map, every entry that
    names no clause or a target that does not exist: the audit requires none."""
    found, texts = [], rule_texts()
    for contract in sorted(set(texts) | set(CLAUSES)):
        stated, entries = clauses(texts.get(contract, "")), CLAUSES.get(contract, ())
        for index in range(max(len(stated), len(entries))):
            clause = stated[index] if index < len(stated) else None
            entry = entries[index] if index < len(entries) else None
            if entry is None:
                found.append(f"{contract}: clause {index + 1} is mapped to no test: {clause!r}")
            elif clause is None or entry[0] not in clause:
                found.append(f"{contract}: entry {index + 1} ({entry[0]!r}) names no clause "
                             f"{index + 1} of the rule (it reads {clause!r})")
            elif len(entry) < 2:
                found.append(f"{contract}: clause {index + 1} names nothing that can fail it")
            found += [f"{contract}: clause {index + 1} names {target!r}, which the suites lack"
                      for target in (entry or ())[1:] if not _target_exists(target)]
    return found


def table() -> str:
    """Every clause with what can fail it, as a Markdown table."""
    rows = ["| contract | clause | can be failed by |", "|---|---|---|"]
    texts = rule_texts()
    for contract, entries in CLAUSES.items():
        for clause, (_, *targets) in zip(clauses(texts.get(contract, "")), entries):
            cell = clause.replace("|", "\\|")
            rows.append(f"| `{contract}` | {cell} | {', '.join(f'`{t}`' for t in targets)} |")
    return "\n".join(rows) + "\n"
