"""The vLLM bridge: ``--platform=vllm:NAME`` runs the kit's suites against vLLM's own
platform ``NAME`` (a built-in such as ``cpu``, or any installed ``vllm.platform_plugins``
entry point), installed with ``pip install 'conformance[vllm]'``.

- ``discovery``: finds NAME the way vLLM does and names the bridged platform;
- ``platform``: the kit ``Platform`` generated around vLLM's platform instance, where
  what vLLM's interface lacks fails with a message that says so;
- ``capabilities``: the kit's declaration, derived from vLLM's own declarations;
- ``config``: ``check_and_update_config`` run in a child process, whose environment
  changes are reported;
- ``communicator``: vLLM's device communicator, built as vLLM builds it;
- ``attention``: vLLM's attention backends, driven through their layer, metadata
  builder and cache writer; ``packing`` reads their packed caches back;
- ``engine``: ``vllm.LLM`` on the kit's seeded model, the engine the Engine suite judges;
- ``profile``: the ``vllm`` mustpass profile, the contracts vLLM's interface promises.

Nothing outside this package imports vLLM.
"""
