"""The engine core: requests, KV-cache blocks, scheduling and the step loop."""
