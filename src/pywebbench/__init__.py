"""pywebbench: a benchmark harness for Python web stacks."""

__version__ = "0.1.0"
