"""The engine's layout, checked by scanning its imports (DESIGN.md, "The layers"): the
measured package imports nothing of the project outside itself (what it runs is what its
hash, the run cache key, covers), and the engine never imports the analysis."""
import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO

ENGINE = REPO / "engine"
SERVE = ENGINE / "serve"


def project_imports(path: Path):
    """Every engine or analysis module a file may import, relative imports resolved, at any
    depth (``from .x import y`` names both ``.x`` and ``.x.y``: y may be a module)."""
    package = path.relative_to(REPO).parts[:-1]       # a module's package, or an __init__'s own
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])])
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        yield from (n for n in names if n.split(".")[0] in ("engine", "analysis"))


ENGINE_FILES = sorted(p for p in ENGINE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", sorted(SERVE.rglob("*.py")), ids=lambda p: p.name)
def test_the_measured_package_imports_only_itself(path):
    for name in project_imports(path):
        assert name == "engine.serve" or name.startswith("engine.serve."), \
            f"{path.relative_to(REPO)} imports {name}: the run cache key hashes engine/serve alone"


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: str(p.relative_to(ENGINE)))
def test_the_engine_never_imports_the_analysis(path):
    for name in project_imports(path):
        assert not name.startswith("analysis"), f"{path.relative_to(REPO)} imports {name}"


def test_the_scan_sees_relative_imports():
    """The scanner itself: a relative import is read as the module it names."""
    assert {"engine.serve", "engine.serve.rawlog"} <= set(project_imports(SERVE / "experiment.py"))
    assert "engine.serve.config" in set(project_imports(ENGINE / "runs" / "calibrate.py"))
