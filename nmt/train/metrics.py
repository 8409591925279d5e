"""Metrics as JSON lines (one object per event), the file a learning curve is plotted from;
mirrored to TensorBoard event files when the `tensorboard` package is installed. Without torch:
`nmt plot` reads them in a fraction of a second."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from nmt.errors import NmtError
from nmt.files import cannot_write


def _tensorboard_writer(folder: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard not installed: JSON lines only
        return None
    _quiet_event_writer_thread()
    try:
        return SummaryWriter(str(folder))
    except OSError as e:
        raise cannot_write(folder, e) from None


def _quiet_event_writer_thread() -> None:
    """TensorBoard writes its event files on a thread of its own, which keeps its error (a full
    disk) for the next flush to raise, where MetricsLog names the folder; left to Python, the
    thread would also print its traceback. Threads of any other kind report as before."""
    if getattr(threading.excepthook, "nmt_quiet_event_writer", False):
        return
    previous = threading.excepthook

    def hook(args) -> None:
        if type(args.thread).__name__ == "_AsyncWriterThread" and issubclass(args.exc_type, OSError):
            return
        previous(args)

    hook.nmt_quiet_event_writer = True
    threading.excepthook = hook


class MetricsLog:
    """A run's metrics.jsonl (and TensorBoard's event files); a write the system refuses (a full
    disk) is a one-line error naming the file or folder."""

    def __init__(self, path: Path, tensorboard_dir: Path | None = None):
        """`tensorboard_dir`: where event files go (`tensorboard --logdir` it), if tensorboard is installed."""
        self.path, self.tensorboard_dir = path, tensorboard_dir
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")
        except OSError as e:
            raise cannot_write(path, e) from None
        self._board = _tensorboard_writer(tensorboard_dir) if tensorboard_dir else None

    def write(self, kind: str, step: int, **values) -> None:
        record = {"kind": kind, "step": step, "time": round(time.time(), 3)}
        record.update({k: (round(v, 6) if isinstance(v, float) else v) for k, v in values.items()})
        try:
            self._file.write(json.dumps(record) + "\n")
            self._file.flush()
        except OSError as e:
            raise cannot_write(self.path, e) from None
        if self._board:
            try:
                for name, value in values.items():
                    if isinstance(value, (int, float)):
                        self._board.add_scalar(f"{kind}/{name}", value, step)
                self._board.flush()
            except OSError as e:  # the event writer's thread's, raised here
                raise cannot_write(self.tensorboard_dir, e) from None

    def close(self, quiet: bool = False) -> None:
        """Closes both. `quiet`: another error is already on its way (such as a refused write,
        whose bytes the file still holds and tries again to write as it closes): an error here
        would hide it, and is not raised."""
        closers = [(self._file, self.path)] + ([(self._board, self.tensorboard_dir)] if self._board else [])
        for writer, path in closers:
            try:
                writer.close()
            except OSError as e:
                if not quiet:
                    raise cannot_write(path, e) from None


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
