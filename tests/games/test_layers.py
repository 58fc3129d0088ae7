"""The engine's modules import each other in layers, never in a cycle (issue 12: base imported
log, which imported base and registry, inside functions to dodge the cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

GAMES = Path(__file__).resolve().parents[2] / "games"


def imports_of(path: Path) -> set[str]:
    """The games modules a file imports, wherever the import stands (functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "games":
                found.update(f"games.{alias.name}" for alias in node.names)
            elif node.module.startswith("games."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("games"))
    return found


def graph() -> dict[str, set[str]]:
    modules = {
        "games" if path.name == "__init__.py" else f"games.{path.stem}": path
        for path in GAMES.glob("*.py")
    }
    return {name: imports_of(path) & set(modules) for name, path in modules.items()}


def test_no_module_of_the_engine_imports_itself_back() -> None:
    edges = graph()
    cycles = []
    for start in edges:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in edges[node]:
                if nxt == start:
                    cycles.append(" -> ".join([*path, nxt]))
                elif nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    assert cycles == []


def test_base_is_the_bottom_layer() -> None:
    assert graph()["games.base"] <= {"games.options", "games.errors"}
    assert "games.base" in graph()["games.registry"]
    assert {"games.base", "games.registry"} <= graph()["games.log"]
