"""Acme's paged attention: one request at a time, its context gathered from the
paged KV cache through its block table.

Scores and the softmax run in float32; the product of the (unnormalised) weights
with the values runs in the model's dtype, as the NPU's matrix unit does, and is
normalised afterwards. In float16 that product overflows when hundreds of large
values are summed: a known limitation, waived in ``expectations.toml``.
"""

from __future__ import annotations

import torch

from conformance import AttentionBackend, AttentionImpl, AttentionMetadata, AttentionSelectorConfig


class AcmeAttentionBackend(AttentionBackend):
    @staticmethod
    def get_name() -> str:
        return "acme-paged"

    @staticmethod
    def get_impl_cls() -> type[AttentionImpl]:
        return AcmeAttentionImpl

    @classmethod
    def validate_configuration(cls, config: AttentionSelectorConfig) -> list[str]:
        """Whatever the platform does not declare: the kernel has no sliding window
        and no soft cap, and the platform declares neither."""
        from acme_npu.platform import AcmeNpuPlatform

        try:
            AcmeNpuPlatform.refuse_undeclared_attention(config)
        except ValueError as refusal:
            return [str(refusal)]
        return []


class AcmeAttentionImpl(AttentionImpl):
    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        kv_cache: torch.Tensor,
        metadata: AttentionMetadata,
        output: torch.Tensor,
    ) -> torch.Tensor:
        self._refuse_unsupported(query.dtype, kv_cache.shape[2])
        real = metadata.num_actual_tokens
        self._store(key[:real], value[:real], kv_cache, metadata.slot_mapping[:real])
        starts = metadata.query_start_loc.tolist()
        for request, seq_len in enumerate(metadata.seq_lens.tolist()):
            begin, end = starts[request], starts[request + 1]
            keys, values = self._context(kv_cache, metadata.block_table[request], seq_len)
            output[begin:end] = self._attend(query[begin:end], keys, values, seq_len)
        output[real:] = 0
        return output

    def _refuse_unsupported(self, dtype: torch.dtype, block_size: int) -> None:
        config = AttentionSelectorConfig(self.head_size, dtype, block_size,
                                         kv_cache_dtype=self.kv_cache_dtype,
                                         sliding_window=self.sliding_window,
                                         logits_soft_cap=self.logits_soft_cap)
        reasons = AcmeAttentionBackend.validate_configuration(config)
        if reasons:
            raise ValueError("acme-paged attention does not support " + "; ".join(reasons))

    @staticmethod
    def _store(key, value, kv_cache, slot_mapping) -> None:
        """Each token's key and value into its slot; padding (slot -1) is dropped."""
        keep = slot_mapping >= 0
        slots = slot_mapping[keep].long()
        for half, new in ((0, key), (1, value)):
            flat = kv_cache[half].view(-1, *kv_cache.shape[3:])  # [slots, kv heads, head]
            flat[slots] = new[keep].to(kv_cache.dtype)

    @staticmethod
    def _context(kv_cache, blocks, seq_len: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The request's first ``seq_len`` keys and values, in position order."""
        block_size = kv_cache.shape[2]
        owned = blocks[: -(-seq_len // block_size)].long()
        keys = kv_cache[0, owned].flatten(0, 1)[:seq_len]
        values = kv_cache[1, owned].flatten(0, 1)[:seq_len]
        return keys, values

    def _attend(self, query, keys, values, seq_len: int) -> torch.Tensor:
        """Causal attention of one request's new tokens, which are the last
        ``len(query)`` of its ``seq_len`` positions."""
        group = self.num_heads // self.num_kv_heads
        keys = keys.repeat_interleave(group, dim=1).transpose(0, 1)  # [heads, seq, head]
        values = values.repeat_interleave(group, dim=1).transpose(0, 1)
        scores = torch.matmul(query.transpose(0, 1).float(), keys.float().transpose(1, 2))
        scores *= self.scale
        first = seq_len - query.shape[0]
        query_pos = torch.arange(first, seq_len, device=query.device)[:, None]
        key_pos = torch.arange(seq_len, device=query.device)[None, :]
        scores.masked_fill_(key_pos > query_pos, float("-inf"))
        weights = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
        weighted = torch.matmul(weights.to(values.dtype), values)  # the matrix unit's dtype
        result = weighted.float() / weights.sum(dim=-1, keepdim=True)
        return result.transpose(0, 1).to(query.dtype)
