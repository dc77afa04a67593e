"""Snapshot what a build computed, to check that a refactor changed no number.

Three subcommands:

  glue OUT.json [--build _build]
      every glued value of the last book build (<build>/jupyter_execute/*.glue.json)
      and every displayed output of its executed notebooks (tables as text and HTML;
      figures by a hash of their image).

  summaries OUT.json [--cache DIR]
      summarize() of every raw log in the run cache, under the article scheme and
      (where the log has the extra arrays) the refined one, computed by the analysis
      package this script imports (run it with PYTHONPATH pointing at the tree to test).

  compare A.json B.json
      key by key, exactly (floats by their JSON text); prints the counts and every
      difference, exits 1 if there is one.

Run from the repository root, e.g. (old tree, then new, then compare):
  PYTHONPATH=/old ITL_CACHE_DIR=... python benchmarks/build_snapshot.py summaries old.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path


def glue_values(build: Path) -> dict:
    """Every glued value (myst-nb keeps them in <notebook>.glue.json) and every displayed
    output of the executed notebooks: text as is, anything else (a figure) by hash."""
    out = {}
    for glue_path in sorted((build / "jupyter_execute").rglob("*.glue.json")):
        chapter = glue_path.name[:-len(".glue.json")]
        for name, output in json.loads(glue_path.read_text()).items():
            out[f"{chapter}:glue:{name}"] = _mimes(output.get("data", {}))
    for nb_path in sorted((build / "jupyter_execute").rglob("*.ipynb")):
        nb = json.loads(nb_path.read_text())
        for i, cell in enumerate(nb["cells"]):
            for j, o in enumerate(cell.get("outputs", [])):
                if "data" in o:
                    out[f"{nb_path.stem}:cell{i}:output{j}"] = _mimes(o["data"])
    return out


# what differs between two renders of the same numbers: a pandas Styler's random table
# id and an object's address in its repr
VOLATILE = [(re.compile(r"T_[0-9a-f]{5}"), "T_#####"), (re.compile(r" at 0x[0-9a-f]+"), " at 0x#")]


def _mimes(data: dict) -> dict:
    out = {}
    for mime, v in sorted(data.items()):
        if mime.startswith("text/"):
            v = "".join(v) if isinstance(v, list) else v
            for pattern, fixed in VOLATILE:
                v = pattern.sub(fixed, v)
            out[mime] = v
        else:
            out[mime] = hashlib.sha256(json.dumps(v).encode()).hexdigest()[:16]
    return out


def run_summaries(cache: Path) -> dict:
    import analysis
    out = {}
    for path in sorted((cache / "runs").glob("*.npz")):
        log = analysis.load(path)
        schemes = ["article"] + (["refined"] if "seg_cpu_end" in log.extras else [])
        for scheme in schemes:
            out[f"{path.stem}:{scheme}"] = json.loads(json.dumps(analysis.summarize(log, scheme=scheme),
                                                                 default=float))
    return out


def leaves(obj, where=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, f"{where}[{i}]")
    else:
        yield where, json.dumps(obj)


def compare(a: dict, b: dict) -> int:
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    common = sorted(set(a) & set(b))
    n_leaves, diffs = 0, []
    for key in common:
        la, lb = dict(leaves(a[key])), dict(leaves(b[key]))
        n_leaves += len(la)
        for leaf in sorted(set(la) | set(lb)):
            if la.get(leaf) != lb.get(leaf):
                diffs.append((key, leaf, la.get(leaf), lb.get(leaf)))
    print(f"{len(common)} entries in both, {n_leaves} values compared; "
          f"{len(only_a)} only in the first, {len(only_b)} only in the second; {len(diffs)} differ")
    for k in only_a:
        print("  only in the first:", k)
    for k in only_b:
        print("  only in the second:", k)
    for key, leaf, x, y in diffs[:50]:
        print(f"  {key}{leaf}: {x} != {y}")
    return 1 if diffs or only_a or only_b else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("glue")
    g.add_argument("out")
    g.add_argument("--build", default="_build")
    s = sub.add_parser("summaries")
    s.add_argument("out")
    s.add_argument("--cache", default=os.environ.get("ITL_CACHE_DIR", ".cache"))
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args(argv)
    if args.cmd == "compare":
        return compare(json.loads(Path(args.a).read_text()), json.loads(Path(args.b).read_text()))
    data = glue_values(Path(args.build)) if args.cmd == "glue" else run_summaries(Path(args.cache))
    Path(args.out).write_text(json.dumps(data, indent=1, sort_keys=True))
    print(f"{len(data)} entries -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
