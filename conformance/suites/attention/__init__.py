"""Attention suite: the backend ``get_attn_backend_cls`` names, against the oracle.

Batches come from Hypothesis (``strategies``), over what the platform declares;
outputs are compared with the float64 oracle within the per-dtype tolerances of
``tolerances``; cache writes and determinism are checked exactly.
"""
