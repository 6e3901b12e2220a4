"""A plugin whose module raises when imported (a missing vendor library, say)."""

raise RuntimeError("vendor runtime library libfoo.so not found")
