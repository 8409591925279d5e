"""A full disk: each verb's write that the system refuses is a one-line error naming the file, exit
code 2, no traceback, and nothing the user had is lost; training resumes once there is room.

The disk is Linux's /dev/full, where every write fails with ENOSPC ("No space left on device"): a
symlink to it planted where nmt writes (the hidden temporary name a file is written under before
it takes its place) makes that one write fail as on a full disk, and the rest of the run as usual."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from nmt.checkpoint import load_checkpoint, save_checkpoint
from nmt.cli import app
from nmt.errors import NmtError
from nmt.files import replaced_whole, write_failure
from nmt.train.metrics import MetricsLog
from tests.conftest import TINY, TINY_DATA, one_line_error, prepared_tiny

FULL = Path("/dev/full")
pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs Linux's /dev/full, a device every write to fails")
NO_SPACE = "cannot write there (No space left on device)"
runner = CliRunner()


def fills_up(path: Path) -> Path:
    """`path` made a symlink to /dev/full: a write there fails as on a full disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(FULL)
    return path


class FillingDisk:
    """A file being written on a disk with room for `room` more bytes (characters, of a text
    file): a write past it writes what fits, then fails as a full disk does (ENOSPC)."""

    def __init__(self, file, room: int):
        self.file, self.room = file, room

    def write(self, data) -> int:
        if len(data) > self.room:  # (text, or bytes of any buffer: torch.save writes memoryviews)
            self.file.write(data[:self.room] if isinstance(data, str) else bytes(data[:self.room]))
            self.room = 0
            raise OSError(28, "No space left on device")
        self.room -= len(data)
        return self.file.write(data)

    def __getattr__(self, name):
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()


def test_a_checkpoint_that_does_not_fit_is_a_one_line_error_and_the_old_one_stays(tmp_path, monkeypatch):
    """torch.save, when a write fails, raises an error of its own as it closes the archive: the
    full disk behind it is what the error says."""
    from nmt import files

    path = tmp_path / "last.pt"
    save_checkpoint({"step": 1}, path)
    monkeypatch.setattr(files, "open", lambda name, mode, **kw: FillingDisk(open(name, mode, **kw), 100_000),
                        raising=False)
    with pytest.raises(NmtError) as refused:
        save_checkpoint({"step": 2, "weights": torch.zeros(100_000)}, path)
    assert str(refused.value) == f"{path}: {NO_SPACE}"
    assert load_checkpoint(path)["step"] == 1 and [p.name for p in tmp_path.iterdir()] == ["last.pt"]


def test_only_the_write_is_called_the_writes_failure(tmp_path):
    """An error raised on purpose while handling an OSError (`from None`: another file's problem,
    said in full) stays what it is; so does an error of nmt's own."""
    try:
        try:
            raise OSError(28, "No space left on device")
        except OSError:
            raise RuntimeError("unexpected pos") from None
    except RuntimeError as e:
        assert write_failure(e) is None
    with pytest.raises(NmtError, match="an input problem"), replaced_whole(tmp_path / "out.txt") as f:
        f.write("x")
        try:
            open(tmp_path / "missing.txt")
        except OSError:
            raise NmtError("an input problem") from None


def train(out: Path, steps: int):
    sets = [f"output_dir={out}", f"data.train={TINY_DATA / 'train'}", f"data.valid={TINY_DATA / 'valid'}",
            f"data.test={TINY_DATA / 'valid'}", f"train.max_steps={steps}", "train.valid_every=1000",
            "train.valid_bleu_sentences=0", "train.log_every=2", "train.max_tokens=128", "train.threads=1"]
    return runner.invoke(app, ["train", str(TINY), "--no-progress", *[f"--set={s}" for s in sets]])


def stopped_with(result, error: str) -> None:
    """Training's refused write: exit code 2, its last line the error, no traceback."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "Exception" not in result.output, result.output
    assert result.output.strip().splitlines()[-1] == f"error: {error}"


def test_training_stops_at_a_checkpoint_that_does_not_fit_and_resumes_once_there_is_room(tmp_path):
    out = tmp_path / "run"
    prepared_tiny(out)
    assert train(out, 2).exit_code == 0
    checkpoints = out / "checkpoints"
    full = fills_up(checkpoints / ".step_0000004.pt.tmp")
    stopped_with(train(out, 4), f"{checkpoints / 'step_0000004.pt'}: {NO_SPACE}; training stopped at step 4, "
                                "and `nmt train` resumes it from its last checkpoint (last.pt)")
    assert sorted(p.name for p in checkpoints.iterdir()) == ["best.pt", "last.pt", "step_0000002.pt"]
    assert load_checkpoint(checkpoints / "last.pt")["progress"]["step"] == 2
    assert not full.is_symlink()  # the temporary file went with the failed write
    (checkpoints / ".step_0000003.pt.tmp").write_bytes(bytes(1_500_000))  # what a save killed midway leaves
    resumed = train(out, 4)
    assert resumed.exit_code == 0 and "resumed at step 2" in resumed.output, resumed.output
    assert (f"note: {checkpoints}: removed 1 unfinished checkpoint file (1.5 MB) of a save that was cut off"
            in resumed.output)
    assert not list(checkpoints.glob(".*"))
    assert load_checkpoint(checkpoints / "last.pt")["progress"]["step"] == 4


def test_training_names_the_metrics_log_and_its_lock_where_they_do_not_fit(tmp_path):
    out = tmp_path / "run"
    prepared_tiny(out)
    fills_up(out / "metrics.jsonl")
    stopped_with(train(out, 2), f"{out / 'metrics.jsonl'}: {NO_SPACE}")
    (out / "metrics.jsonl").unlink()
    (out / ".train.lock").unlink()
    fills_up(out / ".train.lock")  # where the run writes its process id, before anything else
    one_line_error(train(out, 2), f"{out / '.train.lock'}: {NO_SPACE}")


def test_tensorboards_writer_thread_fails_quietly_and_the_log_names_its_folder(tmp_path, capfd):
    pytest.importorskip("tensorboard")
    log = MetricsLog(tmp_path / "metrics.jsonl", tmp_path / "tensorboard")
    log.write("train", 1, loss=2.0)
    [events] = (tmp_path / "tensorboard").iterdir()  # its writer opens the file again for each write
    events.unlink()
    fills_up(events)
    with pytest.raises(NmtError) as refused:
        log.write("train", 2, loss=1.0)
    assert str(refused.value) == f"{tmp_path / 'tensorboard'}: {NO_SPACE}"
    log.close(quiet=True)
    assert capfd.readouterr().err == ""  # the thread's own traceback is not printed
    failed = []  # a thread of any other kind still reports its error
    threading.excepthook, previous = (lambda args: failed.append(args.exc_type)), threading.excepthook
    try:
        from nmt.train.metrics import _quiet_event_writer_thread

        _quiet_event_writer_thread()
        thread = threading.Thread(target=lambda: open(FULL, "w").write("x" * 10_000) or open(FULL).close())
        thread.start()
        thread.join()
    finally:
        threading.excepthook = previous
    assert failed == [OSError]


def test_a_tokenizer_that_does_not_fit_is_an_error_and_the_one_there_stays(tmp_path):
    """sentencepiece does not report a write it could not finish: the model must load back whole
    before it takes the place of the one there."""
    out = tmp_path / "run"
    sets = [f"--set=output_dir={out}", f"--set=data.train={TINY_DATA / 'train'}"]
    assert runner.invoke(app, ["tokenizer", str(TINY), *sets]).exit_code == 0
    before = (out / "spm.model").read_bytes()
    fills_up(out / ".spm.tmp.model")
    one_line_error(runner.invoke(app, ["tokenizer", str(TINY), *sets, "--set=tokenizer.vocab_size=150"]),
                   f"{out / 'spm.model'}: cannot write there (sentencepiece's model did not load back whole")
    assert (out / "spm.model").read_bytes() == before
    assert not list(out.glob(".spm.tmp.*"))


def test_prepared_data_that_does_not_fit_is_an_error_and_leaves_no_partial_shards(tmp_path):
    out = tmp_path / "run"
    sets = [f"--set=output_dir={out}", f"--set=data.train={TINY_DATA / 'train'}", f"--set=data.valid={TINY_DATA / 'valid'}",
            f"--set=data.test={TINY_DATA / 'valid'}"]
    assert runner.invoke(app, ["tokenizer", str(TINY), *sets]).exit_code == 0
    fills_up(out / "data" / "train.src.bin.tmp")
    one_line_error(runner.invoke(app, ["prepare", str(TINY), *sets]), f"{out / 'data' / 'train.src.bin'}: {NO_SPACE}")
    assert not list((out / "data").glob("*.tmp"))


def test_deduplication_through_files_names_its_folder(tmp_path, monkeypatch):
    from nmt.data import dedup

    monkeypatch.setattr(dedup, "_CHUNK", 2)  # two chunks and more go through bucket files
    monkeypatch.setattr(dedup, "open", lambda path, mode: open(FULL, mode), raising=False)
    with pytest.raises(NmtError) as refused:
        dedup.find_duplicates(iter([("a", "b"), ("c", "d"), ("a", "b"), ("e", "f"), ("g", "h")] * 3000), tmp_path)
    assert str(refused.value) == f"{tmp_path}: {NO_SPACE}"
    assert list(tmp_path.iterdir()) == []


def test_an_onnx_export_that_does_not_fit_leaves_nothing(trained_tiny, tmp_path, monkeypatch):
    pytest.importorskip("onnx")
    from nmt.export import onnx as onnx_export

    def full(model, staging: Path, quantize: bool) -> None:
        (staging / "encoder.onnx").write_bytes(b"half")
        with open(FULL, "wb") as f:
            f.write(b"x" * 10_000)

    monkeypatch.setattr(onnx_export, "export_graphs", full)
    out = tmp_path / "onnx"
    with pytest.raises(NmtError) as refused:
        onnx_export.export_onnx(trained_tiny.out / "checkpoints" / "best.pt", out)
    assert str(refused.value) == f"{out}: {NO_SPACE}"
    assert list(tmp_path.iterdir()) == []
