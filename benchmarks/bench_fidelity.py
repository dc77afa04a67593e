"""Side-by-side fidelity benchmark: our engine's cost against the article engine's.

    python benchmarks/bench_fidelity.py [--repeats 15]

Cuts the article's engine listing out of ../shared/seed at run time into a temporary
folder (never into the repository), then times both engines in one fresh
single-threaded process, alternating which goes first (engine/fidelity.py). Prints one
table: ours with the article forward, ours with the fast forward, the article's, and
the ratios. Without the article text it says so and times our side alone. Run it
alone on the machine: it is a timing experiment.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.fidelity import MALLOC_ENV, format_table, within  # noqa: E402
from engine.runs.child import engine_child_json  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    res = engine_child_json("fidelity", "--json", "--repeats", str(a.repeats), what="fidelity benchmark",
                            env=MALLOC_ENV)
    if a.json:
        print(json.dumps(res))
        return 0
    print(format_table(res))
    if res["article_engine"]:
        off = within(res)
        print("every article-forward ratio within 0.85-1.15" if not off
              else f"outside 0.85-1.15: {', '.join(off)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
