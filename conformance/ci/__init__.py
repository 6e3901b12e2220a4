"""The CI harness's provider-neutral core: fleet files (``fleet``), the names a CI
provider may generate from them (``names``, ``layout``), verdicts on records
(``verdicts``), choosing and merging a device's records (``collect``), a device job's
report (``report``) and the collector's gate (``gate``). None of it knows a CI
provider: what a provider does for it (annotate a build, store a verdict word) is the
``publish.Publisher`` protocol.

Providers live in subpackages (``conformance.ci.buildkite``); the import linter keeps
this core from importing them. It imports ``conformance.results`` and never the
engine, the suites or torch, so it runs on any CI agent."""
