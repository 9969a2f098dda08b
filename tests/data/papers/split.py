"""Draws the development/validation split of the papers under pdfs/ (run once, before anyone reads them).

`python tests/data/papers/split.py` rewrites splits.json. The draw depends only on the sorted file
names and SEED, so rerunning it over the same files reproduces the recorded split.
"""

import json
import random
from pathlib import Path

SEED = 20261201
VALIDATION_SIZE = 6
HERE = Path(__file__).resolve().parent


def draw(names: list[str], seed: int = SEED, size: int = VALIDATION_SIZE) -> dict[str, list[str]]:
    """Pick `size` validation papers uniformly at random; the rest are for development."""
    ordered = sorted(names)
    validation = sorted(random.Random(seed).sample(ordered, size))
    development = [name for name in ordered if name not in validation]
    return {"seed": seed, "validation": validation, "development": development}


if __name__ == "__main__":
    pdfs = [path.name for path in (HERE / "pdfs").glob("*.pdf")]
    (HERE / "splits.json").write_text(json.dumps(draw(pdfs), indent=2) + "\n")
