"""The published hardware support matrix, generated from result records only.

``build.build_matrix`` makes the data model (``model``) from record files;
``site.write_site`` renders it as ``index.html``, ``matrix.md`` and ``matrix.json``;
``check`` reviews records submitted to the repository's ``matrix/records/``. Nothing
here imports torch, the engine or the suites, so it runs on a machine without
devices.
"""
