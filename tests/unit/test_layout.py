"""The package layout shows the pipeline, and every import runs downward.

Layers, lowest first; a module may import from its own layer or a lower one. Modules stay under
MAX_MODULE_LINES and functions under MAX_FUNCTION_LINES, bar the short allow-lists below. The results
model is the vocabulary every stage speaks (a plan is made of TrialSpecs), so it sits at the
bottom with the process and error helpers; `cli` and `execute` sit on top and drive the rest.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "pywebbench"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "procs", "results"),
    ("catalog",),
    ("plan",),
    ("stage",),
    ("loadgen",),
    ("services",),
    ("measure",),
    ("analyze",),
    ("report",),
    ("execute", "tune", "arguments", "cli", "__main__", "__init__"),
)
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
LONG_FUNCTIONS = {
    "services/nginx.py:render_config",  # the nginx.conf itself, a template in an f-string
}
"""Functions allowed past the limit: data templates, not logic."""
LONG_MODULES: set[str] = set()
"""Modules allowed past the limit, each with why."""


def _layer(module: str) -> int:
    top = module.split(".")[1] if module.count(".") else "__init__"
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"pywebbench.{top} is in no layer: add it to LAYERS in {__file__}")


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "apps" in path.relative_to(PACKAGE).parts[:1]:
            continue  # the apps run inside the stacks' own environments, never imported by the harness
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(p for p in parts if p != "__init__") or "pywebbench"] = path
    return found


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pywebbench"):
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("pywebbench"))
    return names


def test_every_module_is_in_a_layer_and_imports_only_downward() -> None:
    upward = []
    for module, path in _modules().items():
        for imported in _imports(path):
            if imported == "pywebbench":
                continue
            if _layer(imported) > _layer(module):
                upward.append(f"{module} -> {imported}")
    assert upward == []


def test_no_import_cycles_between_modules() -> None:
    modules = _modules()
    graph = {m: {i for i in _imports(p) if i in modules and i != m} for m, p in modules.items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*trail[trail.index(nxt):], nxt]))
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def _sources() -> dict[str, Path]:
    """Every Python file of the package, the apps included, by its path under the package."""
    return {str(p.relative_to(PACKAGE)): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_module_is_longer_than_the_limit() -> None:
    long = {name: n for name, path in _sources().items()
            if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES and name not in LONG_MODULES}
    assert long == {}, f"split these by concern (at most {MAX_MODULE_LINES} lines)"


def test_no_function_is_longer_than_the_limit() -> None:
    long = {}
    for name, path in _sources().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES and f"{name}:{node.name}" not in LONG_FUNCTIONS:
                    long[f"{name}:{node.name}"] = length
    assert long == {}, f"split these (at most {MAX_FUNCTION_LINES} lines, decorators aside)"


def test_the_allow_lists_name_only_what_needs_them() -> None:
    sources = _sources()
    for entry in LONG_FUNCTIONS:
        name, _, function = entry.partition(":")
        assert name in sources and f"def {function}(" in sources[name].read_text(), entry
    for name in LONG_MODULES:
        assert len(sources[name].read_text().splitlines()) > MAX_MODULE_LINES, f"{name} fits now: drop it"
