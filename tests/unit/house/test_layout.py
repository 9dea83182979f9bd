"""The house rules of vgfc/'s layout, held by tests: no import cycle among its modules (lazy
imports inside functions count; imports for type checkers only do not), no hand-written module
over 600 lines, and no catch-all ``except`` in the reader, whose fast path must fail loudly."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "vgfc"
MODULES = {
    ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
    for p in sorted(PACKAGE.rglob("*.py"))
}
GENERATED = "do not edit by hand"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path) -> set[str]:
    """The vgfc modules ``module`` imports, at its top or in any function, outside
    ``if TYPE_CHECKING:``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def add(name: str) -> None:
        while name not in MODULES and "." in name:
            name = name.rpartition(".")[0]
        if name in MODULES and name != module:
            found.add(name)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - child.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in child.names:
                    add(f"{base}.{alias.name}")
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def test_no_import_cycle_among_vgfcs_modules() -> None:
    edges = {m: _imports(m, p) for m, p in MODULES.items()}
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_hand_written_module_is_over_600_lines(module: str) -> None:
    text = MODULES[module].read_text(encoding="utf-8")
    if GENERATED in text[:1000]:
        return  # written by a script from a specification (a test holds it to the source)
    assert text.count("\n") <= 600, f"{module} has {text.count(chr(10))} lines: split it"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("vgfc.read")))
def test_the_reader_catches_no_exception_it_does_not_name(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    broad = [
        handler.lineno
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler)
        and (
            handler.type is None
            or (
                isinstance(handler.type, ast.Name)
                and handler.type.id in ("Exception", "BaseException")
            )
        )
    ]
    assert broad == [], f"{module}: a catch-all except at lines {broad}"
