"""The reference engine: a small vLLM-shaped engine, the plugin-facing interfaces and
the built-in platforms. It never imports the suites, the harness or the matrix."""
