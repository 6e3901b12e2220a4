"""Model definitions and the configuration they are built from."""
