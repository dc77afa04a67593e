"""The analysis package's layout, checked by scanning its imports (README, "Layout").

Layers, lowest first: core (the method) < engine_link (the one door to the engine) <
across_runs < instrument (the instrument checked) < render (what the chapters show) <
chapters (one module per page). A module imports only from its own layer or lower ones;
there is no import cycle; only engine_link imports ``engine``; an import inside a function
is only for a heavy or optional library; no module is much above 300 lines; no two modules
of engine and analysis share a name, save a page module and the layer package its page is
named like (the instrument page and the instrument layer: see _page_and_its_layer).
"""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

ROOT = REPO
PACKAGE = ROOT / "analysis"
LAYERS = {"core": 0, "engine_link": 1, "across_runs": 2, "instrument": 3, "render": 4, "chapters": 5}
LAZY_OK = {"pandas", "matplotlib", "myst_nb"}   # heavy or optional: imported when used
MAX_LINES = 300


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path):
    """(imported module, inside a function?) for every import statement of a file."""
    tree = ast.parse(path.read_text())
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        inner = id(node) in nested
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, inner
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            if node.module is None or node.level and not node.module:
                for alias in node.names:        # from . import x: x may be a module
                    yield f"{target}.{alias.name}", inner
            else:
                yield target, inner


def layer(module: str):
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


MODULES = sorted(PACKAGE.rglob("*.py"))
GRAPH = {module_name(p): list(imports(p)) for p in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_a_module_imports_no_higher_layer(path):
    me = module_name(path)
    mine = layer(me)
    if mine is None:
        return                                   # the package facade, analysis/__init__
    for target, _ in GRAPH[me]:
        if target.startswith("analysis."):
            theirs = layer(target)
            assert theirs is not None and theirs <= mine, f"{me} imports {target}, a higher layer"


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_only_engine_link_imports_the_engine(path):
    me = module_name(path)
    for target, _ in GRAPH[me]:
        if target == "engine" or target.startswith("engine."):
            assert me == "analysis.engine_link", f"{me} imports {target}; go through analysis.engine_link"


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_imports_inside_functions_are_for_heavy_libraries_only(path):
    me = module_name(path)
    for target, inner in GRAPH[me]:
        if inner:
            assert target.split(".")[0] in LAZY_OK, f"{me} imports {target} inside a function"


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_module_is_long(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES, f"{module_name(path)}: split it by idea"


def test_no_import_cycle():
    known = set(GRAPH)
    edges = {m: {t if t in known else t.rpartition(".")[0] for t, _ in deps}
             & known - {m} for m, deps in GRAPH.items()}
    # a package's __init__ is entered before its modules: only real module edges count
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == "open":
                cycle = stack[stack.index(n):] + [n]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_the_scan_sees_a_violation():
    """The scanner itself: a core module importing render would be flagged."""
    assert layer("analysis.render.figures") > layer("analysis.core.gaps")
    found = dict(imports(PACKAGE / "core" / "timeline.py"))
    assert "analysis.core.threadclocks" in found and "analysis.core.coverage" in found


def test_import_and_a_first_summary_do_not_load_pandas():
    code = ("import sys, analysis\n"
            "from analysis.core.synthetic import runlog_from_steps\n"
            "steps = [{'t0': 0.0, 't1': 0.01, 'n_decode': 1, 'graph': 1, 'seg': [('decode', 0.0, 0.01)]},\n"
            "         {'t0': 0.01, 't1': 0.02, 'n_decode': 1, 'graph': 1, 'seg': [('decode', 0.01, 0.02)]}]\n"
            "log = runlog_from_steps(steps, emissions=[(0, 0.01), (0, 0.02), (0, 0.021)])\n"
            "analysis.summarize(log)\n"
            "print(sorted(m for m in ('pandas', 'matplotlib', 'engine') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""}, check=True).stdout
    assert out.strip() == "[]"


def test_public_api_of_the_design_is_importable_from_analysis():
    import analysis
    for name in ("load", "Partitioner", "partition_run", "summarize", "RunLog", "FirstVersionPartitioner",
                 "ladder_table", "tail_share_table", "summaries_frame", "text_histogram", "paired_change"):
        assert callable(getattr(analysis, name)), name


def _module_names(package: Path) -> dict:
    """Every module and subpackage under ``package`` by its last name -> where it is."""
    out = {}
    for p in package.rglob("*.py"):
        if "__pycache__" not in p.parts and p.stem not in ("__init__", "__main__"):
            out.setdefault(p.stem, []).append(p.relative_to(ROOT).as_posix())
    for d in package.rglob("__init__.py"):
        if d.parent != package:
            out.setdefault(d.parent.name, []).append(d.parent.relative_to(ROOT).as_posix())
    return out


def test_no_analysis_module_shares_a_name_with_an_engine_module():
    """``runs`` or ``sweep`` on both sides read as one thing; a name says which side it is."""
    engine_names, analysis_names = _module_names(ROOT / "engine"), _module_names(PACKAGE)
    shared = {name: engine_names[name] + analysis_names[name] for name in set(engine_names) & set(analysis_names)}
    assert not shared, f"same name in engine and analysis: {shared}"
    twice = {name: where for name, where in analysis_names.items()
             if len(where) > 1 and sorted(where) != _page_and_its_layer(name)}
    assert not twice, f"same name twice in analysis: {twice}"


def _page_and_its_layer(name: str) -> list:
    """The one pairing the distinct-names rule lets through: a page module named for its page
    (analysis/chapters/<name>.py) and a layer package of that name (analysis/<name>/, a layer of
    LAYERS), e.g. the instrument page and the instrument layer. A page must be named for its
    page, and a layer is named in LAYERS, the README's and DESIGN's layout and the imports of
    every module above it, so neither side can be renamed sensibly; the path tells them apart
    (analysis.chapters.instrument is the page, analysis.instrument the layer). Two modules, a
    module and a subpackage, or a page and anything but a layer still fail."""
    return sorted([f"analysis/chapters/{name}.py", f"analysis/{name}"]) if name in LAYERS else []


def test_only_a_page_and_a_layer_may_share_a_name():
    """The exemption above covers a page beside a layer, and nothing else."""
    assert _page_and_its_layer("instrument") == ["analysis/chapters/instrument.py", "analysis/instrument"]
    assert _page_and_its_layer("stall") == []                    # not a layer: a clash with it fails
    other = sorted(["analysis/across_runs/instrument.py", "analysis/instrument"])   # a module beside the layer
    assert other != _page_and_its_layer("instrument")
