"""Benchmark: where a warm rebuild of the book spends its time, chapter by chapter.

    BOOK_PROFILE=quick python benchmarks/bench_rebuild.py [--chapters stall ladder ...]

Executes each chapter of _toc.yml as the build does (a fresh kernel per notebook, cells
in order, nbclient), with every run already cached, and prints per chapter: the kernel
start, the setup cell (imports, runs, summaries), every other cell by what it does
(the three slowest named), and the total; then the sums. Run it alone, after a build
of the same profile has filled the run cache.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    out = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                out.append(Path(node["file"]).stem)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(toc.get("root")), walk(toc)
    return [c for c in dict.fromkeys(out) if (ROOT / "book" / f"{c}.ipynb").exists()]


def run_chapter(name: str) -> dict:
    nb = nbformat.read(ROOT / "book" / f"{name}.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=-1, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "book")}})
    t0 = time.perf_counter()
    with client.setup_kernel():
        started = time.perf_counter()
        cells = []
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            t = time.perf_counter()
            client.execute_cell(cell, i)
            cells.append((i, time.perf_counter() - t, cell.source.splitlines()[0][:60] if cell.source else ""))
    end = time.perf_counter()
    return {"kernel": started - t0, "cells": cells, "total": end - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chapters", nargs="*", default=None)
    args = ap.parse_args()
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    names = args.chapters or chapters()
    print(f"profile {os.environ.get('BOOK_PROFILE', 'article')}: {len(names)} chapters\n")
    print(f"{'chapter':<12} {'kernel':>7} {'setup':>7} {'rest':>7} {'total':>7}   slowest other cells")
    sums = {"kernel": 0.0, "setup": 0.0, "rest": 0.0, "total": 0.0}
    for name in names:
        r = run_chapter(name)
        code = r["cells"]
        params, setup, rest = code[0], code[1] if len(code) > 1 else (0, 0.0, ""), code[2:]
        row = {"kernel": r["kernel"], "setup": params[1] + setup[1], "rest": sum(c[1] for c in rest),
               "total": r["total"]}
        for k in sums:
            sums[k] += row[k]
        slow = ", ".join(f"{c[2]!r} {c[1]:.2f}s" for c in sorted(rest, key=lambda c: -c[1])[:3])
        print(f"{name:<12} {row['kernel']:7.2f} {row['setup']:7.2f} {row['rest']:7.2f} {row['total']:7.2f}   {slow}")
        sys.stdout.flush()
    print(f"{'sum':<12} {sums['kernel']:7.2f} {sums['setup']:7.2f} {sums['rest']:7.2f} {sums['total']:7.2f}")


if __name__ == "__main__":
    main()
