"""Entry-point functions of the built-in platforms.

They only name classes, so loading them imports no platform module; ``cuda`` answers
None on a machine without a usable CUDA device, as the discovery contract asks.
"""

from __future__ import annotations


def cpu() -> str:
    return "conformance.reference_engine.platforms.cpu.CpuPlatform"


def cuda() -> str | None:
    import torch

    # is_available() asks the driver for a device count without creating a context.
    if not torch.cuda.is_available():
        return None
    return "conformance.reference_engine.platforms.cuda.CudaPlatform"
