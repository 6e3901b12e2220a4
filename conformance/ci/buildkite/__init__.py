"""The Buildkite provider: the pipeline generated from a fleet (``pipeline``, with
its step scripts in ``scripts``), its check against Buildkite's schema
(``validate``), the ``buildkite-agent`` calls that publish verdicts (``agent``) and
the ``conformance pipeline`` command (``cli``). It builds on the provider-neutral
core, ``conformance.ci``, which never imports it."""
