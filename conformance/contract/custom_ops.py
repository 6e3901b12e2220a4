"""The platform's own kernels for the model's per-token ops (vLLM's ``CustomOp``).

Each of the engine's layers has a torch implementation, which is the reference. A
platform may name, in ``Platform.custom_ops_module``, a module holding kernels for any
subset of ``OPS``; an engine on that platform calls them instead. Kernels must give
the torch layer's result (to the dtype's rounding) and keep its signature:

- ``rms_norm(x, weight, eps, residual=None) -> out``: ``weight * norm(x)``; with
  ``residual``, ``norm(x + residual)``, and ``residual`` is updated in place to
  ``x + residual``;
- ``rotary_embedding(positions, x, cos, sin) -> out``: ``x`` ``[tokens, heads,
  head_size]`` rotated (rotate-half form) by fp32 tables ``[max_position,
  head_size // 2]``;
- ``silu_and_mul(x) -> out``: ``silu(gate) * up`` for ``x = [gate, up]`` on the last dim;
- ``linear(x, weight) -> out``: ``x @ weight.T``.

Rule ``platform.custom_ops.importable``: when ``custom_ops_module`` is set, the module
imports, defines at least one of ``OPS``, and each one it defines is callable.

Rule ``platform.custom_ops.match_reference``: each op the module defines equals the
engine's torch layer in every declared dtype, at the row counts of a decode of one
request, of a few and of a prefill, on activations packed or as views whose rows lie
further apart than their width (as the query and key of a fused QKV projection do):
``rms_norm`` with and without the fused residual add (and the residual updated in
place to ``x + residual``), ``rotary_embedding`` at scattered positions,
``silu_and_mul``, and ``linear`` (its ``x`` with any number of leading dims); each returns its result in the input's dtype and
on its device; a call that repeats an earlier call's shapes with new values gives the
new result; each leaves its inputs as they were (``rms_norm``'s residual aside); and
a returned tensor keeps its value after later calls. ``rms_norm`` uses the eps it is
passed and holds on rows of small and of large magnitude: where the eps outweighs the
mean square, and where squares overflow float16.
"""

OPS = ("rms_norm", "rotary_embedding", "silu_and_mul", "linear")
