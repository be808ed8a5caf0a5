"""The rooms of the house: what may import what (README, Layout)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ("eval", "search", "uci_engine", "opening_book")


def imported_packages(path: Path) -> set[str]:
    """Top-level package of every import in a module, at any depth (lazy imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", modules("eval"), ids=lambda path: path.name)
def test_evaluation_imports_neither_search_nor_protocol(path: Path) -> None:
    assert not imported_packages(path) & {"search", "uci_engine", "training", "opening_book"}


@pytest.mark.parametrize("package", ENGINE)
def test_the_engine_never_imports_training(package: str) -> None:
    for path in modules(package):
        assert "training" not in imported_packages(path), path


@pytest.mark.parametrize("path", modules("search"), ids=lambda path: path.name)
def test_search_knows_nothing_of_uci(path: Path) -> None:
    assert "uci_engine" not in imported_packages(path)


@pytest.mark.parametrize("package", ENGINE)
def test_the_engine_never_imports_a_cluster_engine(package: str) -> None:
    """Scale-out lives in training/ and tools/ (tools/cluster.py), never in the engine."""
    for path in modules(package):
        assert not imported_packages(path) & {"distributed", "dask", "ray"}, path


PACKAGES = ("eval", "search", "uci_engine", "opening_book", "training", "tools")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """The project modules `path` imports, at any depth except under ``if TYPE_CHECKING:`` (annotations only)."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
               and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
               for node in ast.walk(block)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found.update(name for name in names if name in known)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = [path for package in PACKAGES for path in modules(package)]
    known = {_module_name(path) for path in paths}
    return {_module_name(path): _imports(path, known) - {_module_name(path)} for path in paths}


def test_no_import_circle() -> None:
    """No module reaches itself through imports (lazy imports inside functions count: they only hide a circle)."""
    graph = import_graph()
    circles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            module, route = stack.pop()
            for imported in graph.get(module, ()):
                if imported == start:
                    circles.append(" -> ".join(route + [start]))
                elif imported not in seen and not imported.endswith("__init__"):
                    seen.add(imported)
                    stack.append((imported, route + [imported]))
    assert not circles, circles


@pytest.mark.parametrize("package", (*PACKAGES, "tests"))
def test_nothing_edits_sys_path(package: str) -> None:
    """Packages import each other by name from the checkout's root; no module puts a folder on the path."""
    for path in modules(package):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
                    and node.value.id == "sys":
                raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno} uses sys.path")


@pytest.mark.parametrize("package", ENGINE)
def test_the_engine_never_imports_the_tools(package: str) -> None:
    for path in modules(package):
        assert "tools" not in imported_packages(path), path
