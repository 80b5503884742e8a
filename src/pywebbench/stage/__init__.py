"""stage: see the package layout in README.md."""
