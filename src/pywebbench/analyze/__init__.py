"""analyze: see the package layout in README.md."""
