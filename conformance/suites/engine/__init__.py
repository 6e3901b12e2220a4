"""Engine suite: ``LLM.generate`` on the plugin against the reference platform."""
