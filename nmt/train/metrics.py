"""Metrics as JSON lines (one object per event), the file a learning curve is plotted from."""

from __future__ import annotations

import json
import time
from pathlib import Path


class MetricsLog:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")

    def write(self, kind: str, step: int, **values) -> None:
        record = {"kind": kind, "step": step, "time": round(time.time(), 3)}
        record.update({k: (round(v, 6) if isinstance(v, float) else v) for k, v in values.items()})
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_metrics(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
