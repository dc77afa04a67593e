"""Where the repository, the tests' data and the article's text are."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"      # the article's text lives here, outside the repository
DATA = REPO / "tests" / "data"
# The article engine's own timing logs, each beside the JSON its analysis script printed:
# part of the repository, so the tests that read them run on every fresh clone.
GOLDEN = DATA / "golden"
GOLDEN_LOGS = sorted(GOLDEN.glob("*.npz"))
