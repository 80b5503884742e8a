"""The package never hands a command line to a shell."""

from __future__ import annotations

import ast
from pathlib import Path

import pywebbench

PACKAGE = Path(pywebbench.__file__).parent


def test_no_shell_true_anywhere_in_the_package() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "shell" and not (
                    isinstance(node.value, ast.Constant) and node.value.value is False):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.value.lineno}")
            if isinstance(node, ast.Attribute) and node.attr in ("system", "popen") and \
                    isinstance(node.value, ast.Name) and node.value.id == "os":
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} os.{node.attr}")
    assert offenders == []

