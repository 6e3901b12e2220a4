"""Performance figures of a platform, measured by one implementation shared by
``bench/`` and ``conformance run --bench``.

- ``throughput``: the reference engine's output tokens/s (``bench/throughput.py``);
- ``attention``: a platform attention backend's decode KV-read rate
  (``bench/attention.py``);
- ``communicator``: a communicator's collective bus bandwidth (``bench/communicator.py``);
- ``headline``: the figures ``conformance run --bench`` adds to a record, with the
  settings it measures them at;
- ``recording``: runs ``headline`` in a child process and adds its section to a
  record, atomically, only when measuring succeeded.

Importing this package imports nothing heavy: the measuring modules (torch, the
engine) load in the process that measures.
"""
