"""Platforms that break while being measured by ``conformance run --bench``: the cpu
platform with an attention backend whose ``forward`` raises, or kills its process.
Nothing the ``platform`` suite checks calls ``forward``, so their runs pass."""

from __future__ import annotations

import os
import signal

from conformance.reference_engine.attention.cpu_attn import CpuAttentionBackend, CpuAttentionImpl
from conformance.reference_engine.platforms.cpu import CpuPlatform


class RaisingImpl(CpuAttentionImpl):
    def forward(self, *args, **kwargs):
        raise RuntimeError("forward refused while being measured")


class KillingImpl(CpuAttentionImpl):
    def forward(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)


def _backend(impl: type[CpuAttentionImpl]) -> type[CpuAttentionBackend]:
    return type(f"{impl.__name__}Backend", (CpuAttentionBackend,),
                {"__module__": __name__, "get_impl_cls": staticmethod(lambda: impl)})


RaisingImplBackend = _backend(RaisingImpl)
KillingImplBackend = _backend(KillingImpl)


class _BrokenWhileMeasured(CpuPlatform):
    backend: type = CpuAttentionBackend

    @classmethod
    def plugin(cls) -> str:
        return f"{cls.__module__}.{cls.__qualname__}"

    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        cls.refuse_undeclared_attention(config)
        return f"{cls.backend.__module__}.{cls.backend.__qualname__}"


class RaisingPlatform(_BrokenWhileMeasured):
    device_name = "bench-raises"
    backend = RaisingImplBackend


class KillingPlatform(_BrokenWhileMeasured):
    device_name = "bench-killed"
    backend = KillingImplBackend


ENTRY_POINTS = {
    "bench_raises": f"{__name__}:RaisingPlatform.plugin",
    "bench_killed": f"{__name__}:KillingPlatform.plugin",
}
