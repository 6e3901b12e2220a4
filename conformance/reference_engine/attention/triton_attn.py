"""The ``cuda`` platform's attention backend: the Triton kernels of
``conformance.reference_engine.kernels.attention``.

It supports exactly what the CPU backend supports (same head sizes, dtypes, block
sizes and features), so it shares that backend's ``validate_configuration`` and
refusal; only the two steps that touch the device differ. Triton is imported when a
layer is built, not when this module is.
"""

from __future__ import annotations

from conformance.contract.attention import AttentionImpl, AttentionMetadata
from conformance.reference_engine.attention.cpu_attn import CpuAttentionBackend, CpuAttentionImpl


class TritonAttentionBackend(CpuAttentionBackend):
    @staticmethod
    def get_name() -> str:
        return "TRITON_ATTN"

    @staticmethod
    def get_impl_cls() -> type[AttentionImpl]:
        return TritonAttentionImpl


class TritonAttentionImpl(CpuAttentionImpl):
    backend = TritonAttentionBackend

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        from conformance.reference_engine.kernels import attention

        self.kernels = attention

    def write_kv(self, key, value, kv_cache, slot_mapping) -> None:
        self.kernels.reshape_and_cache(key, value, kv_cache, slot_mapping)

    def attend(self, query, key, value, kv_cache, metadata: AttentionMetadata, output) -> None:
        n = metadata.num_actual_tokens
        self.kernels.unified_attention(
            query[:n], kv_cache, output[:n], metadata.query_start_loc, metadata.seq_lens,
            metadata.block_table, metadata.max_query_len, self.scale,
            sliding_window=self.sliding_window, logits_soft_cap=self.logits_soft_cap,
            max_seq_len=metadata.max_seq_len,
        )
