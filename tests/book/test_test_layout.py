"""The tests' own layout: every test module lives in tests/engine, tests/analysis or
tests/book, and none imports another test module or conftest (shared fixtures are in
tests/conftest.py, shared helpers in tests.support)."""
import ast

import pytest

from tests.support.paths import REPO

TESTS = REPO / "tests"
MODULES = sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def test_every_test_module_is_in_one_of_the_three_folders():
    stray = [str(p.relative_to(TESTS)) for p in MODULES if p.parent.name not in ("engine", "analysis", "book")
             or p.parent.parent != TESTS]
    assert not stray, f"test modules outside tests/engine, tests/analysis, tests/book: {stray}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_imports_another_or_conftest(path):
    for node in ast.walk(ast.parse(path.read_text())):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)      # from x import y: x and x.y
                 else [f"{node.module or ''}.{a.name}" for a in node.names] + [node.module or ""]
                 if isinstance(node, ast.ImportFrom) else [])
        for name in names:
            last = name.rpartition(".")[2]
            assert not (last.startswith("test_") or last == "conftest"), \
                f"{path.relative_to(TESTS)} imports {name}: put what it shares in tests.support or a fixture"
