"""The Buildkite harness: fleet files, the generated pipeline, its checks, and the
commands its jobs run (``conformance pipeline``). It imports ``conformance.results``
and never the engine, the suites or torch, so it runs on any CI agent."""
