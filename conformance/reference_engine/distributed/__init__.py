"""The reference communicator, and the rank processes the engine and the suites run."""
