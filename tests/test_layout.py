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
    """Scale-out lives in training/ and tools/ (training/cluster.py), never in the engine."""
    for path in modules(package):
        assert not imported_packages(path) & {"distributed", "dask", "ray"}, path
