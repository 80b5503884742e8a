"""The measuring stage: round scheduling, windows, per-role accounting."""
