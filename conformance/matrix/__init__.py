"""The published hardware support matrix, generated from result records only.

Imports ``conformance.results`` and nothing of the engine, the suites or torch, so it
builds on a docs machine without devices: ``build_matrix`` makes the data model,
``write_site`` renders it as ``index.html``, ``matrix.md`` and ``matrix.json``.
"""

from conformance.matrix.build import Built, build_matrix
from conformance.matrix.site import write_site

__all__ = ["Built", "build_matrix", "write_site"]
