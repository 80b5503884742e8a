"""The connection-shape workloads (issue 50): one module each, listed in registry.py."""
