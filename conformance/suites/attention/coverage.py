"""Explicit batches every attention contract runs besides its random draws.

Random draws find what nobody thought of; they do not promise that a given declared
value was ever tried. So each contract also runs

- a covering array: every declared head size, block size, dtype and KV-cache dtype,
  and every GQA group the suite tries, at least once, and every pair of values of
  two of those dimensions at least once (the full product would cost too much on a
  platform that declares much), so each declared KV-cache dtype meets each model
  dtype it differs from;
- the sizes where vendor kernels break: a decode context across many tiles and
  partitions (beyond 4,096 tokens, at the largest and the smallest declared block
  size), a batch of 64 requests, and the largest GQA groups (8 query heads per KV
  head over 8 KV heads, as Llama-3-70B has, and 16 per KV head).

Under the ``smoke`` profile (slow backends) a sixth of the array runs, with a batch
of each declared KV-cache dtype it lacks, and none of the breaking sizes.
"""

from __future__ import annotations

import dataclasses
import itertools

from conformance.suites.attention.strategies import GQA_GROUPS, KV_HEAD_COUNTS, PROFILE, BatchSpec

#: The longest decode context the explicit batches reach (tokens).
LONG_CONTEXT = 4 * 1024 + 37
#: Requests in the explicit batch of many requests.
MANY_REQUESTS = 64
#: Query heads per KV head and KV heads of the explicit large-group batches.
LARGE_GROUPS = ((8, 8), (16, 2))


def pairwise(factors: dict[str, tuple]) -> list[dict]:
    """Rows that hold every pair of values of any two factors at least once (greedy:
    each row starts from a pair not yet held, then takes, factor by factor, the value
    that holds the most new pairs). Deterministic: rows depend only on ``factors``."""
    names = list(factors)
    index = {name: range(len(values)) for name, values in factors.items()}
    uncovered = [(a, i, b, j) for a, b in itertools.combinations(names, 2)
                 for i in index[a] for j in index[b]]
    rows = []
    while uncovered:
        a, i, b, j = uncovered[0]
        row = {a: i, b: j}
        for name in names:
            if name not in row:
                row[name] = max(index[name], key=lambda v, n=name: sum(
                    (x, row[x], n, v) in uncovered or (n, v, x, row[x]) in uncovered for x in row))
        held = {(x, row[x], y, row[y]) for x, y in itertools.combinations(names, 2)}
        uncovered = [pair for pair in uncovered if pair not in held]
        rows.append({name: factors[name][row[name]] for name in names})
    return rows


def _requests(kinds: tuple[str, ...], block_size: int, variant: int) -> tuple[tuple, tuple]:
    """Query and context lengths of a few requests of ``kinds``, at and around block
    boundaries (which boundary depends on ``variant``)."""
    near = (-1, 0, 1)[variant % 3]
    query_lens, context_lens = [], []
    for n, kind in enumerate(kinds):
        # Two blocks where blocks are small; one of the large ones is boundary enough.
        blocks = 1 + (variant + n) % 2 if block_size < 64 else 1
        if kind == "decode":
            query_lens.append(1)
            context_lens.append(blocks * block_size + near or 1)
        elif kind == "prefill":
            query_lens.append(max(2, blocks * block_size + near))
            context_lens.append(0)
        else:  # chunked: new tokens after a context, each crossing a boundary
            query_lens.append(max(2, block_size // 2 + 1))
            context_lens.append(blocks * block_size + near or 1)
    return tuple(query_lens), tuple(context_lens)


#: Most query heads of a covering batch: the array is about values, not about size.
_COVERING_HEADS = 16


def _kv_heads(group: int, variant: int) -> int:
    fitting = [n for n in KV_HEAD_COUNTS if n * group <= _COVERING_HEADS] or [1]
    return fitting[variant % len(fitting)]


def covering_specs(capabilities, kinds: tuple[str, ...], *, dtypes=None,
                   sliding_window: bool = False, logits_soft_cap: bool = False) -> list[BatchSpec]:
    """The covering array and the breaking sizes, as batches of requests of ``kinds``
    (with the feature on where asked)."""
    dtypes = tuple(dtypes or capabilities.dtypes)
    # The KV-cache dtype last: with "auto" alone (most platforms) the rows are the
    # same as without it.
    rows = pairwise({"head_size": tuple(capabilities.head_sizes),
                     "block_size": tuple(capabilities.block_sizes),
                     "dtype": dtypes, "group": GQA_GROUPS,
                     "kv_cache_dtype": tuple(capabilities.kv_cache_dtypes)})
    specs = []
    for n, row in enumerate(rows):
        query_lens, context_lens = _requests(kinds, row["block_size"], n)
        specs.append(BatchSpec(
            query_lens=query_lens, context_lens=context_lens,
            num_kv_heads=_kv_heads(row["group"], n),
            group=row["group"], head_size=row["head_size"], block_size=row["block_size"],
            dtype=row["dtype"], padding_tokens=n % 3, seed=1000 + n,
            sliding_window=(row["block_size"] + 3) if sliding_window else None,
            logits_soft_cap=20.0 if logits_soft_cap else None, kv_cache_dtype=row["kv_cache_dtype"],
        ))
    if PROFILE == "smoke":  # slow backends (kernels under an interpreter): a sixth, none of the large
        sixth = specs[::6]
        # ... and a cast cache of each declared KV-cache dtype the sixth lacks.
        cast = {spec.kv_cache_dtype for spec in cast_cache_specs(sixth)}
        return sixth + [spec for spec in cast_cache_specs(specs) if spec.kv_cache_dtype not in cast]
    return specs + _breaking_sizes(capabilities, kinds, dtypes, sliding_window, logits_soft_cap)


def sample_specs(capabilities) -> list[BatchSpec]:
    """A cheap sample of the covering batches of all three request kinds, for checks
    of what does not depend on the declared values: the first four, and the first
    with each declared KV-cache dtype other than its model dtype (where a backend
    casts the new keys and values)."""
    covering = covering_specs(capabilities, ("prefill", "chunked", "decode"))
    return covering[:4] + cast_cache_specs(covering)


def fused_qkv_specs(capabilities) -> list[BatchSpec]:
    """The sample batches, and the first again with four heads of their own (MHA, as
    GPT-NeoX's layers have): there the per-KV-head layout of a fused projection leaves
    the query's heads unpacked too, not only the key's and value's."""
    sample = sample_specs(capabilities)
    return [*sample, dataclasses.replace(sample[0], num_kv_heads=4, group=1)]


def cast_cache_specs(specs: list[BatchSpec]) -> list[BatchSpec]:
    """The first of ``specs`` for each KV-cache dtype among them that differs from
    its batch's model dtype: where a backend casts the new keys and values."""
    first = {}
    for spec in specs:
        if spec.cache_dtype != spec.dtype:
            first.setdefault(spec.kv_cache_dtype, spec)
    return list(first.values())


def _breaking_sizes(capabilities, kinds, dtypes, sliding_window, logits_soft_cap) -> list[BatchSpec]:
    head_size, dtype = min(capabilities.head_sizes), dtypes[0]
    smallest, largest = min(capabilities.block_sizes), max(capabilities.block_sizes)
    features = dict(sliding_window=(smallest * 3 + 1) if sliding_window else None,
                    logits_soft_cap=20.0 if logits_soft_cap else None)
    common = dict(head_size=head_size, dtype=dtype, padding_tokens=1, **features)
    specs = []
    if "decode" in kinds:
        # Split-K and tiling bugs start at a few thousand tokens; two block sizes give
        # a few long tiles and very many short ones.
        specs += [BatchSpec(query_lens=(1, 1), context_lens=(LONG_CONTEXT, largest + 1), num_kv_heads=2,
                            group=4, block_size=block_size, seed=7 + block_size, **common)
                  for block_size in sorted({smallest, largest})]
    many_kinds = [kind for kind in ("decode", "chunked", "prefill") if kind in kinds]
    many = [many_kinds[n % len(many_kinds)] for n in range(MANY_REQUESTS)]
    query_lens = tuple(1 if kind == "decode" else 3 + n % 5 for n, kind in enumerate(many))
    context_lens = tuple(0 if kind == "prefill" else 1 + (n * 7) % (2 * smallest) for n, kind in enumerate(many))
    specs.append(BatchSpec(query_lens=query_lens, context_lens=context_lens, num_kv_heads=1, group=2,
                           block_size=smallest, seed=64, **common))
    query_lens, context_lens = _requests(kinds, smallest, 1)
    specs += [BatchSpec(query_lens=query_lens, context_lens=context_lens, num_kv_heads=kv_heads,
                        group=group, block_size=smallest, seed=group, **common)
              for group, kv_heads in LARGE_GROUPS]
    return specs


def successive_steps(capabilities) -> list[BatchSpec]:
    """The batches one layer's impl sees over an engine's first steps: a prefill of
    three requests, decodes whose contexts grow by one token a step (the same request
    count, new lengths), a batch that grows to five requests, a mixed step, one that
    shrinks to a single long request, and five requests again. The last two steps
    repeat the exact shapes (tokens, padding, requests) of the second and the fifth
    with other lengths and block tables: where a plan or graph kept by shape goes
    stale."""
    bs = min(capabilities.block_sizes)
    steps = [((5, bs + 1, 3), (0, 0, 0)),
             ((1, 1, 1), (5, bs + 1, 3)),
             ((1, 1, 1), (6, bs + 2, 4)),
             ((1,) * 5, (7, bs + 3, 5, 2 * bs, 1)),
             ((1, 7, 1), (8, 0, 2 * bs + 1)),
             ((1,), (3 * bs + 2,)),
             ((1,) * 5, (9, bs + 5, 7, 2 * bs + 2, 3)),
             ((1, 1, 1), (2 * bs + 3, 4, max(bs - 1, 2))),  # the second step's shape (padding n % 2 = 1)
             ((1, 7, 1), (2 * bs, 3, bs + 2))]  # the fifth step's shape (padding 0)
    return [BatchSpec(query_lens=query_lens, context_lens=context_lens, num_kv_heads=2, group=4,
                      head_size=min(capabilities.head_sizes), block_size=bs, dtype=capabilities.dtypes[0],
                      padding_tokens=n % 2, seed=300 + n)
            for n, (query_lens, context_lens) in enumerate(steps)]
