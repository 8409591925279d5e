"""Metrics as JSON lines (one object per event), the file a learning curve is plotted from;
mirrored to TensorBoard event files when the `tensorboard` package is installed. Without torch:
`nmt plot` reads them in a fraction of a second."""

from __future__ import annotations

import json
import time
from pathlib import Path

from nmt.errors import NmtError


def _tensorboard_writer(folder: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard not installed: JSON lines only
        return None
    return SummaryWriter(str(folder))


class MetricsLog:
    def __init__(self, path: Path, tensorboard_dir: Path | None = None):
        """`tensorboard_dir`: where event files go (`tensorboard --logdir` it), if tensorboard is installed."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")
        self._board = _tensorboard_writer(tensorboard_dir) if tensorboard_dir else None

    def write(self, kind: str, step: int, **values) -> None:
        record = {"kind": kind, "step": step, "time": round(time.time(), 3)}
        record.update({k: (round(v, 6) if isinstance(v, float) else v) for k, v in values.items()})
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()
        if self._board:
            for name, value in values.items():
                if isinstance(value, (int, float)):
                    self._board.add_scalar(f"{kind}/{name}", value, step)
            self._board.flush()

    def close(self) -> None:
        self._file.close()
        if self._board:
            self._board.close()


def read_metrics(path: Path) -> list[dict]:
    """The records of a metrics log. A last line without its newline is a record a running job is
    still writing, and is left out; any other line that is not a record is an error naming it."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise NmtError(f"{path}: not a metrics log (invalid UTF-8 at byte {e.start})") from None
    except OSError as e:
        raise NmtError(f"{path}: cannot read: {e.strerror or e}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines):  # no newline after it yet
                break
            raise NmtError(f"{path}:{number}: not a metrics record (invalid JSON: {e.msg}, column {e.colno})") from None
        if not (isinstance(record, dict) and isinstance(record.get("kind"), str) and isinstance(record.get("step"), int)):
            raise NmtError(f"{path}:{number}: not a metrics record (an object with \"kind\" and \"step\")")
        records.append(record)
    return records
