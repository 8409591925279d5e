"""Print a few example translations beside their source and reference (used by `make demo`).

    python -m tools.examples SOURCE HYPOTHESES REFERENCE [N]
"""

from __future__ import annotations

import sys
from pathlib import Path

from nmt.data.corpus import read_lines


def show(source: Path, hypotheses: Path, reference: Path, n: int = 3) -> str:
    rows = zip(read_lines(source), read_lines(hypotheses), read_lines(reference))
    blocks = [f"  source:     {s}\n  nmt:        {h}\n  reference:  {r}" for _, (s, h, r) in zip(range(n), rows)]
    return "Example translations:\n" + "\n\n".join(blocks)


if __name__ == "__main__":
    args = sys.argv[1:]
    print(show(Path(args[0]), Path(args[1]), Path(args[2]), int(args[3]) if len(args) > 3 else 3))
