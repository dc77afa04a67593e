"""Which code a cached per-run result depends on: the analysis modules its computation
imports, found by reading their import statements, hashed by path and bytes.

A summary is computed by the core (the method) and the few modules that call it; the
chapters' sentences, tables and figures import the core, never the reverse. Keying the
summaries cache on the whole package would recompute every summary for a fixed word in a
sentence; keying it on what the computation imports, directly or through other modules,
recomputes them exactly when code they ran could have changed. The scan follows import
statements only: a computation that reached code by name at run time (``importlib``, or
``analysis``'s lazy facade) would have to import it plainly to be keyed by it.
"""
from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

ANALYSIS_DIR = Path(__file__).resolve().parent.parent
PACKAGE = "analysis"


def module_file(module: str) -> Path | None:
    """The file of an analysis module or package; None for anything else (a name imported
    from a module, another package)."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    rel = Path(*module.split(".")[1:])
    for path in (ANALYSIS_DIR / rel / "__init__.py", ANALYSIS_DIR / rel.with_suffix(".py") if rel.parts else None):
        if path is not None and path.is_file():
            return path
    return None


def imported(path: Path, module: str) -> set[str]:
    """The module names one file's import statements (at any depth) may load:
    ``from .x import y`` names both ``.x`` and ``.x.y`` (y may be a submodule)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def modules_of(module: str) -> dict[str, Path]:
    """``module`` and every analysis module it imports, directly or not: name -> file."""
    found: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in found or (path := module_file(name)) is None:
            continue
        found[name] = path
        todo.extend(imported(path, name))
    return found


@functools.cache                       # the code does not change under a running process
def code_key(module: str | None = None) -> str:
    """A hash of the code a result computed in ``module`` depends on (the modules it
    imports, itself included); of the whole package for a module outside it (a test's
    or a notebook's function), which could call anything."""
    files = modules_of(module) if module_file(module or "") else None
    if not files:
        files = {str(p): p for p in ANALYSIS_DIR.rglob("*.py") if "__pycache__" not in p.parts}
    h = hashlib.sha256()
    for path in sorted(files.values()):
        h.update(path.relative_to(ANALYSIS_DIR).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]
