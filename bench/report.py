"""Benchmark results as JSON files, written whole or not at all; the checkpoint a benchmark reads."""

from __future__ import annotations

import json
import os
from pathlib import Path


def write_json(path: Path, data: dict) -> None:
    """Write `data` to `path` through a hidden temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def demo_checkpoint(path: str) -> Path:
    """A benchmark's checkpoint (the demo's by default), or a stop saying how to get one."""
    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"{path}: not found (run `make demo` first, or pass -c)")
    return path
