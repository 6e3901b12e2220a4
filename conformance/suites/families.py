"""Families of the plugin contract: methods that share properties, each property
written once, here.

A family is a set of members (the communicator's collectives, the custom ops, what
attention's ``forward`` computes and writes) that the engine uses alike, so a bug one
member can have the others can have too: a communicator that hands out a staging
buffer does it in every collective it has, a kernel library that caches per shape does
it in every kernel. Each property below holds for every member of its family; for each
member, ``CHECKS`` names the contract whose rule states the property, in the family's
words, and the tests of that contract that can fail it. The rule audit
(``tests/test_families.py``) fails on a member without a check of a property of its
family, on a rule that does not state it in those words, and on a test that does not
exist or checks another contract.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Family:
    """Members that share properties: ``properties`` maps each property's name to the
    words every member's rule states it in; ``not_shared`` names properties one might
    expect of the family that its members do not share, and ``not_members`` what one
    might take for a member but is not, each with why."""

    members: tuple[str, ...]
    properties: dict[str, str]
    not_shared: dict[str, str] = dataclasses.field(default_factory=dict)
    not_members: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Check:
    """Where a member's property is promised (the rule of ``contract``) and checked
    (``tests``: ``suite/test_module.py::test_function``, each marked ``contract``)."""

    contract: str
    tests: tuple[str, ...]


_KEPT = "a returned tensor keeps its value after later calls"

FAMILIES: dict[str, Family] = {
    "collectives": Family(
        members=("all_reduce", "all_gather", "reduce_scatter", "gather", "broadcast", "send/recv"),
        properties={
            "exact": "exactly",
            "input_dtype_and_device": "in the input's dtype and on its device",
            "new_values_on_one_shape": "on every call of many in a row on one shape with new values "
                                       "each time",
            "results_kept": _KEPT,
            "non_contiguous_inputs": "may be a non-contiguous view",
        },
        not_shared={
            "inputs_unchanged": "``all_reduce`` may reduce in place (its docstring lets the input "
                                "change) and ``broadcast`` writes into its argument by contract",
            "defaults_as_given": "``all_reduce`` takes no optional argument, and the default peers of "
                                 "send/recv are a rule of their own (``communicator.send_recv."
                                 "default_peers``); the other collectives' rules each state their "
                                 "defaults",
        },
        not_members={
            "barrier": "it carries no tensor: it returns nothing to keep or compare",
            "destroy": "it releases the communicator's resources and returns nothing",
        },
    ),
    "custom_ops": Family(
        members=("rms_norm", "rotary_embedding", "silu_and_mul", "linear"),
        properties={
            "matches_torch_layer": "equals the engine's torch layer in every declared dtype",
            "input_dtype_and_device": "in the input's dtype and on its device",
            "new_values_on_one_shape": "repeats an earlier call's shapes with new values gives the "
                                       "new result",
            "inputs_unchanged": "leaves its inputs as they were",
            "results_kept": _KEPT,
        },
    ),
    "attention_forward": Family(
        members=("output", "cache_write"),
        properties={
            "new_values_on_one_shape": "repeats an earlier step's shapes with new values",
            "inputs_unchanged": "leaves ``query``, ``key`` and ``value`` as they were",
            "results_kept": "keep their values after later calls",
            "non_contiguous_inputs": "non-contiguous views of one fused projection",
        },
        not_shared={
            "input_dtype_and_device": "``forward`` writes into the ``output`` and ``kv_cache`` it "
                                      "is handed, whose dtype and device the caller chose",
        },
    ),
}


def _collective(contract: str, module: str, *tests: str) -> dict[str, Check]:
    """A collective's checks: every test of it goes through ``checks.Problems``, which
    checks each returned tensor exactly (values, dtype, device) and again after the
    check's last call; its ``..._on_every_call`` test repeats one shape with new values,
    and its ``..._on_strided_views`` test passes views with gaps."""
    every = Check(contract, tuple(f"communicator/{module}::{test}" for test in tests))
    repeated = Check(contract, tuple(t for t in every.tests if t.endswith("_on_every_call")))
    views = Check(contract, tuple(t for t in every.tests if t.endswith("_on_strided_views")))
    return {"exact": every, "input_dtype_and_device": every, "new_values_on_one_shape": repeated,
            "results_kept": every, "non_contiguous_inputs": views}


_CUSTOM_OPS = Check("platform.custom_ops.match_reference",
                    ("platform/test_custom_ops.py::test_custom_ops_match_the_torch_layers",))
_SUCCESSIVE = Check("attention.forward.successive_calls",
                    ("attention/test_forward.py::test_successive_calls_on_one_impl",))
_INPUTS = Check("attention.forward.inputs_unchanged",
                ("attention/test_forward.py::test_query_key_value_left_unmodified",))
_FUSED_OUTPUT = Check("attention.forward.mixed", ("attention/test_forward.py::test_mixed_on_fused_qkv_views",))
_FUSED_WRITE = Check("attention.kv_cache.write",
                     ("attention/test_kv_cache.py::test_cache_writes_from_fused_qkv_views",))

#: (family, member) -> property -> its check.
CHECKS: dict[tuple[str, str], dict[str, Check]] = {
    ("collectives", "all_reduce"): _collective(
        "communicator.all_reduce.sum", "test_all_reduce.py",
        "test_all_reduce_sums_over_ranks", "test_all_reduce_sums_on_every_call",
        "test_all_reduce_on_strided_views"),
    ("collectives", "all_gather"): _collective(
        "communicator.all_gather.dims", "test_all_gather.py",
        "test_all_gather_concatenates_in_rank_order", "test_all_gather_on_every_call",
        "test_all_gather_without_dim_gathers_along_the_last",
        "test_all_gather_on_strided_views"),
    ("collectives", "reduce_scatter"): _collective(
        "communicator.reduce_scatter.dims", "test_reduce_scatter.py",
        "test_reduce_scatter_gives_each_rank_its_chunk", "test_reduce_scatter_on_every_call",
        "test_reduce_scatter_without_dim_scatters_along_the_last",
        "test_reduce_scatter_on_strided_views"),
    ("collectives", "gather"): _collective(
        "communicator.gather.dst_only", "test_gather.py",
        "test_gather_reaches_dst_only", "test_gather_on_every_call",
        "test_gather_without_dst_or_dim_collects_on_rank_zero_along_the_last",
        "test_gather_on_strided_views"),
    ("collectives", "broadcast"): _collective(
        "communicator.broadcast.from_src", "test_broadcast.py",
        "test_broadcast_copies_src_in_place", "test_broadcast_on_every_call",
        "test_broadcast_without_src_sends_from_rank_zero",
        "test_broadcast_on_strided_views"),
    ("collectives", "send/recv"): _collective(
        "communicator.send_recv.pairs", "test_send_recv.py",
        "test_send_recv_between_every_pair", "test_send_recv_on_every_call",
        "test_send_recv_on_strided_views"),
    # One rule and one test hold every op: the test calls each op the module defines
    # through the same ``_Calls.check``, which checks every property of the family.
    **{("custom_ops", op): {"matches_torch_layer": _CUSTOM_OPS, "input_dtype_and_device": _CUSTOM_OPS,
                            "new_values_on_one_shape": _CUSTOM_OPS, "inputs_unchanged": _CUSTOM_OPS,
                            "results_kept": _CUSTOM_OPS}
       for op in FAMILIES["custom_ops"].members},
    # ``forward`` computes the output and writes the cache in one call: the successive
    # steps compare both on every step and again after the last; the inputs check
    # covers the key and value the cache write reads.
    ("attention_forward", "output"): {"new_values_on_one_shape": _SUCCESSIVE,
                                      "inputs_unchanged": _INPUTS, "results_kept": _SUCCESSIVE,
                                      "non_contiguous_inputs": _FUSED_OUTPUT},
    ("attention_forward", "cache_write"): {"new_values_on_one_shape": _SUCCESSIVE,
                                           "inputs_unchanged": _INPUTS, "results_kept": _SUCCESSIVE,
                                           "non_contiguous_inputs": _FUSED_WRITE},
}


def table() -> str:
    """The families as a Markdown table: each property, each member, its check."""
    rows = ["| family | property (the rule's words) | member | contract | tests |", "|---|---|---|---|---|"]
    for name, family in FAMILIES.items():
        for prop, words in family.properties.items():
            for member in family.members:
                check = CHECKS.get((name, member), {}).get(prop)
                found = (f"`{check.contract}` | " + ", ".join(f"`{t.split('::')[1]}`" for t in check.tests)
                         if check else "**none** | ")
                rows.append(f"| {name} | {prop}: \"{words}\" | {member} | {found} |")
    return "\n".join(rows) + "\n"
