"""Triton kernels of the CUDA path: paged attention, KV-cache writes, RMSNorm, RoPE,
SiLU-and-mul.

The modules here import ``triton`` (the ``cuda`` extra); this package does not, so
``import conformance`` never needs it. Every kernel also runs on CPU tensors under
``TRITON_INTERPRET=1``, which is how CI checks them without a GPU.
"""
