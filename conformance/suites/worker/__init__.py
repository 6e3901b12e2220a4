"""Worker suite: the plugin's Worker driven in the engine's order, in process and in a
rank process, checked against the reference platform's worker step by step."""
