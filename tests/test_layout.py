"""The package's layout: each folder a stage, imports running one way, no loops."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import explorer

PACKAGE = Path(explorer.__file__).parent
# Lower stages first: a module may import its own stage and any lower one, never a higher.
# Sources load a document once for every column; whether a grammar reads it is the
# column's question (chunking), so grammars come after sources.
STAGES = (
    ("errors", "digests", "jsonio", "limits", "memo", "models", "plugins", "workers"),
    ("embedders",),
    ("sources",),
    ("grammars",),
    ("chunking",),
    ("checking",),
    ("pipeline",),
    ("retrieval",),
    ("store",),
    ("engines",),
    ("view",),
    ("cli", "schema", "__init__", "__main__"),
)
RANK = {name: rank for rank, names in enumerate(STAGES) for name in names}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module of the package `path` imports, at any depth of its code."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if not base.startswith("explorer"):
                continue
            for alias in node.names:  # `from . import v1` names a module
                candidate = f"{base}.{alias.name}"
                found.add(candidate if _exists(candidate) else base)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("explorer")}
    found.discard(name)
    return found


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative).is_dir()


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_belongs_to_a_stage() -> None:
    assert {_stage(m) for m in _graph()} <= set(RANK)


def test_lower_stages_never_import_higher_ones() -> None:
    wrong = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if RANK[_stage(target)] > RANK[_stage(module)]
    ]
    assert wrong == []


def test_no_import_loops() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for target in sorted(graph.get(module, ())):
            if target != "explorer":  # the public face imports everything, nothing imports it
                visit(target, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_every_module_imports_on_its_own() -> None:
    for module in _graph():
        if module != "explorer.__main__":  # runs the command line
            importlib.import_module(module)


def test_the_public_face_is_unchanged() -> None:
    assert {name for name in explorer.__all__ if not hasattr(explorer, name)} == set()
    assert len(explorer.__all__) >= 60
