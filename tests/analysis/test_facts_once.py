"""Every fact in one place: the copies that once stood beside the fact they repeat must
not come back. Each check scans the source (code tokens and syntax trees, never comments)
of engine/ (its measured package engine/serve aside: it cannot change without re-keying
every run), analysis/, benchmarks/, book/_ext and the chapters' code cells, and names
file:line for every copy it finds. test_the_scans_see_a_copy feeds each check the kind of
copy it is there to catch."""
from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from analysis.across_runs import criteria
from analysis.across_runs.wording import LABEL_WORDS
from analysis.core.schemes import CAUSES
from analysis.instrument import control_scores
from engine import RUNGS
from tests.support.paths import REPO


ROOT = REPO
CODE_DIRS = ("engine", "analysis", "benchmarks", "book/_ext")
MEASURED = "engine/serve/"
_STRINGY = {tokenize.STRING} | {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


# ---------------------------------------------------------------- what is scanned
def code_files(root: Path) -> list[tuple[str, str]]:
    """(path relative to root, text) of every Python file scanned, the measured package aside."""
    out = []
    for d in CODE_DIRS:
        for p in sorted((root / d).rglob("*.py")):
            rel = p.relative_to(root).as_posix()
            if "__pycache__" not in p.parts and not rel.startswith(MEASURED):
                out.append((rel, p.read_text()))
    return out


def notebook_cells(root: Path, kinds=("code",)) -> list[tuple[str, str]]:
    """('book/<page>.ipynb[cell]', source) of every chapter cell of the given kinds; a code
    cell's IPython magics (%matplotlib) are blanked so that it parses."""
    out = []
    for p in sorted((root / "book").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(p.read_text())["cells"]):
            if cell["cell_type"] in kinds:
                src = "".join(cell["source"])
                if cell["cell_type"] == "code":
                    src = "\n".join("" if line.lstrip().startswith("%") else line for line in src.splitlines())
                out.append((f"{p.relative_to(root).as_posix()}[{i}]", src))
    return out


def sources(root: Path) -> list[tuple[str, str]]:
    return code_files(root) + notebook_cells(root)


def tokens(text: str):
    """(type, string, line) of the number and string tokens of some code; comments are not tokens here."""
    try:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type == tokenize.NUMBER or t.type in _STRINGY:
                yield t.type, t.string, t.start[0]
    except (tokenize.TokenError, SyntaxError):
        return


def trees(root: Path, pool=None):
    for name, text in (sources(root) if pool is None else pool):
        try:
            yield name, ast.parse(text)
        except SyntaxError:
            continue


def _strs(node) -> list[str]:
    return [e.value for e in getattr(node, "elts", []) if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def _has_constant(node) -> bool:
    return any(isinstance(n, ast.Constant) for n in ast.walk(node))


def _docstring(token: str) -> bool:
    return token.lstrip("rRbBuUfF").startswith(('"""', "'''"))


def _number(text: str):
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return None


# ---------------------------------------------------------------- the checks
def article_profile_copies(root: Path) -> list[str]:
    """The overload factor and the article profile's seeds and duration are engine/runs/target.py's
    figures, not numbers typed again in profiles.py; the article's rate is typed only in target.py."""
    hits = []
    path = root / "engine/runs/profiles.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "OVERLOAD_FACTOR" for t in node.targets)
                and _has_constant(node.value)):
            hits.append(f"engine/runs/profiles.py:{node.lineno}: OVERLOAD_FACTOR from typed numbers")
        if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Profile" and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "article"):
            for kw in node.keywords:
                if kw.arg in ("seeds", "duration", "check_duration") and _has_constant(kw.value):
                    hits.append(f"engine/runs/profiles.py:{kw.value.lineno}: the article profile's {kw.arg} typed")
    for name, text in sources(root):
        if name != "engine/runs/target.py":
            hits += [f"{name}:{line}: the article's rate {s}" for kind, s, line in tokens(text)
                     if kind == tokenize.NUMBER and _number(s) == 6.5]
    return hits


def band_copies(root: Path) -> list[str]:
    """142-318, the article's ordinary baseline preemptions, is typed once (target.TYPICAL_PREEMPTIONS)."""
    hits = []
    for name, text in sources(root):
        lines = text.splitlines()
        for _, s, line in tokens(text):
            the_fact = name == "engine/runs/target.py" and lines[line - 1].startswith("TYPICAL_PREEMPTIONS =")
            if re.search(r"(?<![\d.])(142|318)(\.0)?(?![\d.])", s) and not the_fact:
                hits.append(f"{name}:{line}: {s[:60]}")
    return hits


# engine/fidelity.py hashes its own bytes into the key of the cached fidelity benchmark, so its
# tuple of sides stays typed: naming the forwards there would re-measure that benchmark.
FORWARDS_ALLOWED = {"engine/fidelity.py"}


def forwards_copies(root: Path) -> list[str]:
    """The forwards are engine/serve/config.FORWARDS, not ("article", "fast") typed again."""
    return [f"{name}:{node.lineno}: {ast.unparse(node)[:60]}" for name, tree in trees(root)
            if name not in FORWARDS_ALLOWED for node in ast.walk(tree)
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and {"article", "fast"} <= set(_strs(node))]


def cause_copies(root: Path) -> list[str]:
    """The causes are core.schemes' (CAUSES), not a tuple of the same five names typed again."""
    return [f"{name}:{node.lineno}: {ast.unparse(node)[:60]}" for name, tree in trees(root)
            if name != "analysis/core/schemes.py" for node in ast.walk(tree)
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(_strs(node)) == len(node.elts)
            and set(_strs(node)) == set(CAUSES)]


DISPLAY_WORDS = {w for words in LABEL_WORDS.values() for w in words if w and w not in LABEL_WORDS}


def label_word_copies(root: Path) -> list[str]:
    """How a label is printed is wording.LABEL_WORDS': no other table maps a label to its words."""
    hits = []
    for name, tree in trees(root):
        if name.endswith("across_runs/wording.py"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if (isinstance(k, ast.Constant) and k.value in LABEL_WORDS and isinstance(v, ast.Constant)
                            and v.value in DISPLAY_WORDS):
                        hits.append(f"{name}:{node.lineno}: {k.value!r} -> {v.value!r}")
            if isinstance(node, ast.Call):
                args = [a.value for a in node.args[:2] if isinstance(a, ast.Constant)]
                if len(args) == 2 and args[0] in LABEL_WORDS and args[1] in DISPLAY_WORDS:
                    hits.append(f"{name}:{node.lineno}: {args[0]!r} named {args[1]!r}")
    return hits


CRITERIA_VALUES = {float(v) for k, val in vars(criteria).items() if k.isupper() and not k.startswith("_")
                   for v in (val if isinstance(val, tuple) else (val,))
                   if isinstance(v, (int, float)) and float(v) not in (0.0, 1.0, 2.0)}
JUDGED_BY_CRITERIA = ("findings.py", "finding_checks.py", "sweep_findings.py")
THRESHOLD_WORDS = re.compile(r"\d%|\de-\d|below half|least halves")


def threshold_copies(root: Path) -> list[str]:
    """The findings' thresholds and their words come from criteria.py, not numbers typed beside it."""
    hits = []
    for name, text in code_files(root):
        if name.startswith("analysis/") and name.rsplit("/", 1)[-1] in JUDGED_BY_CRITERIA:
            for kind, s, line in tokens(text):
                if kind == tokenize.NUMBER and _number(s) in CRITERIA_VALUES:
                    hits.append(f"{name}:{line}: threshold {s}")
                elif kind != tokenize.NUMBER and not _docstring(s) and THRESHOLD_WORDS.search(s):
                    hits.append(f"{name}:{line}: threshold in words {s[:60]}")
    return hits


def control_bound_copies(root: Path) -> list[str]:
    """The instrument chapter states its controls' bounds from control_scores, not typed."""
    words = control_scores.bound_words().values()
    return [f"{name}: {w}" for name, src in notebook_cells(root, ("code", "markdown"))
            if name.startswith("book/checking.ipynb") for w in words
            if re.search(rf"(?<![\d.]){re.escape(w)}", src)]


def helper_copies(root: Path) -> list[str]:
    """One home for the percent formats (wording.py) and one median over a rung's runs
    (select.rung_median); core.summary keeps its scratch-array median, the method's hot path."""
    hits = []
    for name, tree in trees(root, code_files(root)):
        if not name.startswith("analysis/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if "pct" in node.name.lower() and not name.endswith("across_runs/wording.py"):
                    hits.append(f"{name}:{node.lineno}: a percent helper {node.name}")
                if node.name in ("_median", "median") and name != "analysis/core/summary.py":
                    hits.append(f"{name}:{node.lineno}: a median helper {node.name}")
    return hits


def rung_name_copies(root: Path) -> list[str]:
    """The chapters name rungs through analysis.across_runs.rungs, never by typing them."""
    named = [r for r in RUNGS if r.startswith("+")]
    hits = []
    for name, tree in trees(root, notebook_cells(root)):
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    node.value in RUNGS or any(r in node.value for r in named)):
                hits.append(f"{name}:{node.lineno}: {node.value[:60]!r}")
    return hits


CHECKS = [article_profile_copies, band_copies, forwards_copies, cause_copies, label_word_copies,
          threshold_copies, control_bound_copies, helper_copies, rung_name_copies]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_no_fact_is_typed_twice(check):
    hits = check(ROOT)
    assert not hits, f"{check.__doc__}\ntyped again:\n" + "\n".join(hits)


def test_the_serve_packages_two_forward_lists_agree():
    """engine/serve keeps FORWARDS in config.py and the forwards' models in model.py (editing the
    measured package re-keys every run); everything outside it imports config.FORWARDS."""
    from engine.serve import config, model
    assert tuple(model.FORWARDS) == config.FORWARDS


def test_the_cache_checks_the_members_the_analysis_requires():
    """The run cache (imported by every measuring child, which must not load the analysis) and the
    raw-log contract (which must not import the engine) each name the raw log's members."""
    from analysis.core.contract import REQUIRED
    from engine.runs.cache import RAW_LOG_MEMBERS
    assert sorted(RAW_LOG_MEMBERS) == sorted(REQUIRED)


def test_the_scans_see_a_copy(tmp_path):
    """Each check flags the kind of copy it guards against, in a tree made of such copies."""
    def put(rel, text):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    def cells(*sources):
        return json.dumps({"cells": [{"cell_type": kind, "source": src} for kind, src in sources]})

    put("engine/runs/profiles.py", 'OVERLOAD_FACTOR = 10.0 / 6.5\n'
                                   'P = Profile("article", seeds=(1, 2, 3, 4, 5), duration=60.0)\n')
    put("engine/runs/target.py", "low: float = 142.0\n")
    put("analysis/across_runs/load_sweep.py", 'STALLS = ("prefill", "preempt", "graph", "gc", "tok")\n'
                                  'ok = {"article", "fast"} <= seen\n')
    put("analysis/render/stall.py", 'LABEL_NAMES = {"kernel": "forward pass"}\n')
    put("analysis/across_runs/findings.py", 'C = "graph < 1% of tail time"\nok = v < 0.01\n')
    put("analysis/across_runs/criteria.py", 'def pct(x):\n    return f"{100 * x:g}%"\n')
    put("analysis/across_runs/overload_findings.py", "def _median(frame, rung):\n    return 0.0\n")
    put("book/checking.ipynb", cells(("markdown", "at most 0.01% of all gap time")))
    put("book/ladder.ipynb", cells(("code", '%matplotlib inline\nlast = median_run(runs, "+admit watermark")\n')))
    for check in CHECKS:
        assert check(tmp_path), f"{check.__name__} saw no copy"
