"""The vLLM bridge: ``--platform=vllm:NAME`` runs the kit's suites against vLLM's own
platform ``NAME`` (a built-in such as ``cpu``, or any installed ``vllm.platform_plugins``
entry point), installed with ``pip install 'conformance[vllm]'``.

- ``lookup``: finds NAME the way vLLM does; ``discovery``: the kit's entry for it,
  with what the run tests of it (``tested``: the backend class, the hook's changes);
- ``platform``: the kit ``Platform`` generated around vLLM's platform instance, where
  what vLLM's interface lacks fails with a message that says so;
- ``errors``: whose fault a failure is (vLLM's interface, the plugin, the bridge);
- ``capabilities``: the kit's declaration, derived from vLLM's own declarations;
- ``config``: ``check_and_update_config`` run in a child process, whose environment
  changes are reported; ``config_changes``: what the hook changed, field by field,
  and the failure that blames it on the plugin;
- ``communicator``: vLLM's device communicator, built as vLLM builds it;
- ``attention``: vLLM's attention backends, driven through their layer, metadata
  builder and cache writer; ``packing`` reads their packed caches back;
- ``engine``: ``vllm.LLM`` on the kit's seeded model, the engine the Engine suite judges;
- ``profile``: the ``vllm`` mustpass profile, the contracts vLLM's interface promises.

Nothing outside this package imports vLLM.
"""
