"""The ``cpu`` platform's attention backend: a C kernel, or paged attention in a few
large torch ops where the C kernel is unavailable.

One ``forward`` serves prefill, chunked prefill and decode requests of one batch. The
new keys and values are scattered into the cache first (one ``index_copy_`` for all
tokens). Then, where the C kernel ``kernels/cpu/paged_attention.c`` builds (see
``kernels/cpu/native.py``), one call computes every request: it reads each key and
value of the context once for all query heads of its GQA group, and beats SDPA on
plain prefills too. Otherwise each request is computed with batched matrix
products over all its heads at once:

- a request with no earlier context and no sliding window or soft cap (a plain
  prefill) goes to ``torch.nn.functional.scaled_dot_product_attention`` on its own
  keys and values, which are exactly what the cache now holds;
- decode requests (one new token) are computed together, in groups small enough for
  their gathered blocks to stay in the CPU cache, padded to the group's longest
  context and masked;
- every other request gathers the cache blocks it reads (``index_select`` of whole
  blocks, skipping blocks a sliding window has passed) and computes
  ``softmax(scale * q.k) v`` for all its query heads in two batched matrix products,
  with GQA as a reshape (query head ``h`` reads KV head ``h // group``).

Scores and sums are computed in float32 whatever the model dtype, and normalisation
is deferred to the end (divide the ``[queries, head_size]`` sum, not the
``[queries, keys]`` probabilities): in fp16, the unnormalised sum over a long context
can exceed the dtype's range even though the result cannot.
"""

from __future__ import annotations

import ctypes

import torch
import torch.nn.functional as F

from conformance.contract.attention import (
    AttentionBackend,
    AttentionImpl,
    AttentionMetadata,
    AttentionSelectorConfig,
)
from conformance.reference_engine.kernels.cpu import native

SUPPORTED_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
SUPPORTED_HEAD_SIZES = (32, 64, 128, 256)
#: Block sizes are powers of two from this up: a block then holds whole cache lines.
MIN_BLOCK_SIZE = 16
#: Decode requests are computed together in groups whose gathered keys and values
#: take at most this many bytes: few ops per group, and data that stays in the L2/L3
#: cache between the gather and the products that read it.
DECODE_GROUP_BYTES = 4 << 20
KV_CACHE_DTYPES = {"auto": None, "float32": torch.float32, "bfloat16": torch.bfloat16,
                   "float16": torch.float16}


#: The C kernel's dtype codes.
NATIVE_DTYPES = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2}
_P, _I, _I64, _F = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_float
_NATIVE_ARGTYPES = [_P, _I64, _P, _I64, _P, _I64, _P, _I64, _P, _P, _P, _P, _I64, _I, _I, _I, _I, _I, _I,
                    _I, _F, _I, _F, _I, _I]


#: The C kernel's variants (``native.selected_variant``) that beat this module's torch
#: path on decode, measured by ``bench/attention.py`` (bench/README.md): the portable
#: one too (vectorised by the compiler), though not on plain prefills (below); on the
#: others the torch path runs. NEON is not yet measured on Arm hardware.
NATIVE_ATTENTION_VARIANTS = frozenset({"avx512_bf16", "avx512f", "avx2", "portable"})
#: Those that also beat SDPA on plain prefills (measured on a Zen 5). On a CPU with
#: AMX, SDPA's bf16 runs on it and wins, and on the Xeon measured its fp32 too.
NATIVE_PREFILL_VARIANTS = frozenset({"avx512_bf16"})


def prefills_in_kernel() -> bool:
    """Whether the C kernel computes plain prefills too, or leaves them to SDPA."""
    return native.selected_variant().name in NATIVE_PREFILL_VARIANTS and "amx_bf16" not in native.isa_flags()


def native_kernel(variant: str | None = None):
    """The C ``paged_attention`` function of ``variant`` with its argument types
    declared, or None where C kernels are off or cannot be built. Without a variant:
    this host's, and None unless it is one that beats torch."""
    if variant is None and native.enabled() and native.selected_variant().name not in NATIVE_ATTENTION_VARIANTS:
        return None
    library = native.library("paged_attention", variant)
    if library is None:
        return None
    kernel = library.paged_attention
    if kernel.argtypes is None:
        kernel.argtypes, kernel.restype = _NATIVE_ARGTYPES, ctypes.c_int
    return kernel


def _is_power_of_two(n: int) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


class CpuAttentionBackend(AttentionBackend):
    """Supports the head sizes, dtypes and block sizes above, GQA and MQA, sliding
    window and logits soft cap; refuses everything else."""

    @staticmethod
    def get_name() -> str:
        return "CPU_ATTN"

    @staticmethod
    def get_impl_cls() -> type[AttentionImpl]:
        return CpuAttentionImpl

    @classmethod
    def validate_configuration(cls, config: AttentionSelectorConfig) -> list[str]:
        reasons = []
        if config.head_size not in SUPPORTED_HEAD_SIZES:
            reasons.append(f"head size {config.head_size} (supported: {SUPPORTED_HEAD_SIZES})")
        if config.dtype not in SUPPORTED_DTYPES:
            reasons.append(f"dtype {config.dtype} (supported: {SUPPORTED_DTYPES})")
        if not _is_power_of_two(config.block_size) or config.block_size < MIN_BLOCK_SIZE:
            reasons.append(
                f"block size {config.block_size} (supported: powers of two >= {MIN_BLOCK_SIZE})"
            )
        if config.kv_cache_dtype not in KV_CACHE_DTYPES:
            reasons.append(
                f"kv-cache dtype {config.kv_cache_dtype!r} (supported: {tuple(KV_CACHE_DTYPES)})"
            )
        if config.sliding_window is not None and config.sliding_window <= 0:
            reasons.append(f"sliding window {config.sliding_window} (must be positive)")
        if config.logits_soft_cap is not None and config.logits_soft_cap <= 0:
            reasons.append(f"logits soft cap {config.logits_soft_cap} (must be positive)")
        return reasons


class CpuAttentionImpl(AttentionImpl):
    backend: type[AttentionBackend] = CpuAttentionBackend
    #: The dtype unnormalised sums are accumulated in (None: the query's dtype).
    accumulate_dtype: torch.dtype | None = torch.float32

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._accepted: set[tuple[torch.dtype, int]] = set()
        self._workspace: dict[tuple[str, torch.dtype], torch.Tensor] = {}

    def _buffer(self, name: str, shape: tuple[int, ...], dtype: torch.dtype, device) -> torch.Tensor:
        """A scratch tensor of ``shape``, reused across calls: a fresh multi-megabyte
        tensor per request would cost more in page faults than the copy into it."""
        numel = 1
        for size in shape:
            numel *= size
        flat = self._workspace.get((name, dtype))
        if flat is None or flat.numel() < numel or flat.device != device:
            flat = self._workspace[(name, dtype)] = torch.empty(numel, dtype=dtype, device=device)
        return flat[:numel].view(shape)

    def check_configuration(self, dtype: torch.dtype, block_size: int) -> None:
        """Raise ``ValueError`` naming the reasons unless the backend supports this
        layer with this dtype and block size (checked once per combination)."""
        if (dtype, block_size) in self._accepted:
            return
        config = AttentionSelectorConfig(
            self.head_size, dtype, block_size, self.kv_cache_dtype,
            self.sliding_window, self.logits_soft_cap,
        )
        reasons = self.backend.validate_configuration(config)
        if reasons:
            raise ValueError(
                f"{self.backend.get_name()} refuses this attention configuration: "
                + "; ".join(reasons)
            )
        self._accepted.add((dtype, block_size))

    def forward(self, query, key, value, kv_cache, metadata: AttentionMetadata, output):
        self.check_configuration(query.dtype, kv_cache.shape[2])
        n = metadata.num_actual_tokens
        self.write_kv(key[:n], value[:n], kv_cache, metadata.slot_mapping[:n])
        self.attend(query, key, value, kv_cache, metadata, output)
        output[n:] = 0
        return output

    def write_kv(self, key, value, kv_cache, slot_mapping) -> None:
        """Scatter each token's key and value into its slot; slot -1 is skipped."""
        slots = slot_mapping.long()
        real = slots >= 0
        if not bool(real.all()):
            slots, key, value = slots[real], key[real], value[real]
        num_kv_heads, head_size = kv_cache.shape[3], kv_cache.shape[4]
        kv_cache[0].view(-1, num_kv_heads, head_size).index_copy_(0, slots, key.to(kv_cache.dtype))
        kv_cache[1].view(-1, num_kv_heads, head_size).index_copy_(0, slots, value.to(kv_cache.dtype))

    def attend(self, query, key, value, kv_cache, metadata: AttentionMetadata, output) -> None:
        """Attention of every request's new tokens over its context, into ``output``."""
        kernel = self._native_kernel(query, kv_cache, output)
        if kernel is None:
            self._attend_torch(query, key, value, kv_cache, metadata, output)
            return
        table, starts, seq_lens = (_int32_rows(t) for t in (
            metadata.block_table, metadata.query_start_loc, metadata.seq_lens))
        # Plain prefills read the step's keys and values, as SDPA does in the torch path,
        # where that path would (same dtype, no sliding window or soft cap); where SDPA
        # is the faster, it computes them after the kernel has computed the rest.
        new, to_sdpa = None, []
        if (self.sliding_window is None and self.logits_soft_cap is None and kv_cache.dtype == query.dtype
                and key.stride() == value.stride() and key.stride()[1:] == (self.head_size, 1)):
            new = key, value
            if metadata.max_query_len > 1 and not prefills_in_kernel():
                bounds, lens = metadata.query_start_loc.tolist(), metadata.seq_lens.tolist()
                to_sdpa = [(bounds[r], bounds[r + 1]) for r, seq_len in enumerate(lens)
                           if self._is_plain_prefill(bounds[r + 1] - bounds[r], seq_len, query, kv_cache)]
        status = kernel(
            query.data_ptr(), query.stride(0), output.data_ptr(), output.stride(0),
            kv_cache.data_ptr(), kv_cache.shape[1], table.data_ptr(), table.stride(0),
            starts.data_ptr(), seq_lens.data_ptr(), new and new[0].data_ptr(), new and new[1].data_ptr(),
            key.stride(0), seq_lens.shape[0], self.num_heads, self.num_kv_heads, self.head_size,
            kv_cache.shape[2], NATIVE_DTYPES[query.dtype], NATIVE_DTYPES[kv_cache.dtype], self.scale,
            self.sliding_window or 0, self.logits_soft_cap or 0.0, torch.get_num_threads(), int(bool(to_sdpa)),
        )
        if status != 0:
            raise RuntimeError(f"paged_attention C kernel failed (head size {self.head_size})")
        for start, end in to_sdpa:
            self._prefill(query[start:end], key[start:end], value[start:end], output[start:end])

    def _is_plain_prefill(self, query_len: int, seq_len: int, query, kv_cache) -> bool:
        """A request SDPA computes exactly: no earlier context, no sliding window or
        soft cap, and a cache holding the query's dtype."""
        return (query_len > 1 and seq_len == query_len and self.sliding_window is None
                and self.logits_soft_cap is None and kv_cache.dtype == query.dtype)

    def _native_kernel(self, query, kv_cache, output):
        """The C kernel where it is built and takes these tensors as they are, else None.
        It accumulates in float32, so another accumulate dtype stays on torch."""
        if (self.accumulate_dtype != torch.float32 or not query.is_cpu
                or query.dtype not in NATIVE_DTYPES or output.dtype != query.dtype
                or kv_cache.dtype not in NATIVE_DTYPES or not kv_cache.is_contiguous()
                or kv_cache.shape[3:] != (self.num_kv_heads, self.head_size)):
            return None
        for t in (query, output):
            if t.stride(2) != 1 or t.stride(1) != self.head_size:
                return None
        return native_kernel()

    def _attend_torch(self, query, key, value, kv_cache, metadata: AttentionMetadata, output) -> None:
        """``attend`` in torch ops (see the module docstring)."""
        starts = metadata.query_start_loc.tolist()
        seq_lens = metadata.seq_lens.tolist()
        block_size = kv_cache.shape[2]
        decodes = [r for r in range(len(seq_lens)) if starts[r + 1] - starts[r] == 1]
        if decodes:
            # Groups whose gathered keys and values (float32) stay within the cache.
            longest = max(seq_lens[r] for r in decodes)
            per_request = 2 * 4 * self.num_kv_heads * self.head_size * -(-longest // block_size) * block_size
            size = max(1, DECODE_GROUP_BYTES // per_request)
            for i in range(0, len(decodes), size):
                group = decodes[i : i + size]
                self._decode(query, kv_cache, metadata, group, [starts[r] for r in group], output)
        for r, seq_len in enumerate(seq_lens):
            start, end = starts[r], starts[r + 1]
            if end - start <= 1:  # nothing to do, or a decode (done above)
                continue
            context_len = seq_len - (end - start)
            if self._is_plain_prefill(end - start, seq_len, query, kv_cache):
                self._prefill(query[start:end], key[start:end], value[start:end], output[start:end])
                continue
            # Blocks wholly before the sliding window of the first query are never read.
            first_visible = 0 if self.sliding_window is None else max(0, context_len - self.sliding_window + 1)
            first_block = first_visible // block_size
            blocks = metadata.block_table[r, first_block : -(-seq_len // block_size)].long()
            num_keys = seq_len - first_block * block_size
            k, v = (self._gather(kv_cache[i], blocks, name)[:num_keys] for i, name in enumerate("kv"))
            key_pos = torch.arange(first_block * block_size, seq_len, device=query.device)
            query_pos = torch.arange(context_len, seq_len, device=query.device)
            self._paged(query[start:end], k, v, query_pos, key_pos, output[start:end])

    def _decode(self, query, kv_cache, metadata: AttentionMetadata, requests: list[int],
                tokens: list[int], output) -> None:
        """Decode requests (one new token, at the end of its context) together, in a
        fixed number of ops: contexts padded to the longest and masked. Few ops matter
        on a busy machine, where each multi-threaded op can wait a scheduler tick for
        its second thread."""
        device, block_size = query.device, kv_cache.shape[2]
        num_reqs, kv_heads, group = len(requests), self.num_kv_heads, self.num_heads // self.num_kv_heads
        rows = torch.tensor(requests, device=device)
        seq_lens = metadata.seq_lens[rows].long()
        num_blocks = -(-int(seq_lens.max()) // block_size)
        # Entries past a context may be -1: read any block there, it is masked below.
        blocks = metadata.block_table[rows, :num_blocks].long().clamp(min=0)
        num_keys = num_blocks * block_size
        allowed = self.allowed(seq_lens - 1, torch.arange(num_keys, device=device))  # [requests, keys]

        k = self._gather(kv_cache[0], blocks.flatten(), "k").view(num_reqs, num_keys, kv_heads, -1)
        q = query[tokens].to(torch.float32).view(num_reqs, kv_heads, group, -1) * self.scale
        # One batched product per KV head: [requests, group, D] x [requests, D, keys].
        scores = torch.stack([torch.bmm(q[:, h], k[:, :, h].transpose(1, 2)) for h in range(kv_heads)], dim=1)
        weights, total = self._unnormalised_softmax(scores, allowed[:, None, None, :])

        # Values are summed straight from the cache by embedding_bag, which reads only
        # the rows it sums (no gathered copy). Normalised first, the sum cannot exceed
        # the values' range. Masked keys get weight 0 and point at the request's first
        # slot, so slots past a context (even NaN) are never read.
        slots = (blocks * block_size)[:, :, None] + torch.arange(block_size, device=device)
        slots = slots.view(num_reqs, num_keys)
        slots = torch.where(allowed, slots, slots[:, :1])
        value_rows = slots[:, None, :] * kv_heads + torch.arange(kv_heads, device=device)[None, :, None]
        value_rows = value_rows[:, :, None, :].expand(num_reqs, kv_heads, group, num_keys)
        value_table = kv_cache[1].view(-1, self.head_size)  # row slot * kv_heads + kv_head
        result = F.embedding_bag(value_rows.reshape(-1, num_keys), value_table, mode="sum",
                                 per_sample_weights=(weights / total).view(-1, num_keys).to(value_table.dtype))
        output[tokens] = result.view(num_reqs, self.num_heads, -1).to(output.dtype)

    def _gather(self, cache: torch.Tensor, blocks: torch.Tensor, name: str) -> torch.Tensor:
        """The cache blocks ``blocks`` of one of keys/values, end to end, as float32
        ``[positions, kv_heads, head_size]``."""
        shape = (blocks.shape[0], *cache.shape[1:])
        gathered = torch.index_select(cache, 0, blocks, out=self._buffer(name, shape, cache.dtype, cache.device))
        if cache.dtype != torch.float32:
            gathered = self._buffer(name, shape, torch.float32, cache.device).copy_(gathered)
        return gathered.view(-1, self.num_kv_heads, self.head_size)

    def _prefill(self, q, k, v, out) -> None:
        """Causal attention of a request over its own new tokens (no earlier context)."""
        # As [1, heads, tokens, D]: only 4-D inputs reach torch's fused CPU kernel.
        result = F.scaled_dot_product_attention(
            q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None],
            is_causal=True, scale=self.scale, enable_gqa=True,
        )
        out.copy_(result[0].transpose(0, 1))

    def allowed(self, query_pos: torch.Tensor, key_pos: torch.Tensor) -> torch.Tensor:
        """``[queries, keys]``: which keys each query may attend to."""
        allowed = key_pos[None, :] <= query_pos[:, None]
        if self.sliding_window is not None:
            allowed &= query_pos[:, None] - key_pos[None, :] < self.sliding_window
        return allowed

    def _unnormalised_softmax(self, scores: torch.Tensor, allowed: torch.Tensor):
        """Soft-capped, masked ``exp(scores - max)`` and its sum over keys (the last
        dim); the caller divides the weighted sum of values by that sum."""
        if self.logits_soft_cap is not None:
            scores = torch.tanh(scores / self.logits_soft_cap).mul_(self.logits_soft_cap)
        scores.masked_fill_(~allowed, float("-inf"))
        weights = scores.sub_(scores.amax(dim=-1, keepdim=True)).exp_()
        return weights, weights.sum(dim=-1, keepdim=True)

    def _paged(self, q, k, v, query_pos, key_pos, out) -> None:
        """``q`` ``[queries, heads, D]`` over gathered ``k``/``v`` ``[keys, kv_heads, D]``."""
        num_queries, group = q.shape[0], self.num_heads // self.num_kv_heads
        compute = torch.float32
        acc_dtype = self.accumulate_dtype or q.dtype
        # [kv_heads, group * queries, D]: each KV head's query heads stacked as rows.
        q = q.to(compute).view(num_queries, self.num_kv_heads, group, -1).permute(1, 2, 0, 3)
        q = q.reshape(self.num_kv_heads, group * num_queries, -1)
        scores = torch.matmul(q * self.scale, k.permute(1, 2, 0))
        scores = scores.view(self.num_kv_heads, group, num_queries, -1)
        weights, total = self._unnormalised_softmax(scores, self.allowed(query_pos, key_pos))
        weights = weights.view(self.num_kv_heads, group * num_queries, -1).to(acc_dtype)
        summed = torch.matmul(weights, v.to(acc_dtype).transpose(0, 1))
        result = summed.view(self.num_kv_heads, group, num_queries, -1) / total
        out.view(num_queries, self.num_kv_heads, group, -1).copy_(result.permute(2, 0, 1, 3))


def _int32_rows(t: torch.Tensor) -> torch.Tensor:
    """``t`` as int32 with unit stride along its last dim (the C kernel's layout)."""
    if t.dtype != torch.int32 or t.stride(-1) != 1:
        t = t.to(torch.int32).contiguous()
    return t
