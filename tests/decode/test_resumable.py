"""A file translation stopped before its end goes on where it stopped (nmt.decode.resumable): the
same command again translates only the lines not yet written, and writes what one uninterrupted
run writes; other settings or an edited source are one-line errors that keep what was done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nmt.decode.stream as stream
from nmt.cli import app
from tests.cli.test_full_disk import FillingDisk
from tests.conftest import TINY_DATA, one_line_error

runner = CliRunner()
CHUNK = 16  # lines a chunk here (5,000 in use): the partial file grows chunk by chunk
SENTENCES = (TINY_DATA / "valid.en").read_text(encoding="utf-8").splitlines()


class Chunks:
    """The chunks translated so far (`calls`); `stop_at(n)`: the n-th chunk's translation from now
    is interrupted, as by Ctrl-C (0: none)."""

    def __init__(self, translate):
        self.translate, self.calls, self.stop = translate, 0, 0

    def stop_at(self, n: int) -> None:
        self.calls, self.stop = 0, n

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.stop:
            raise KeyboardInterrupt
        return self.translate(*args, **kwargs)


@pytest.fixture
def chunks(monkeypatch) -> Chunks:
    monkeypatch.setattr(stream, "CHUNK_LINES", CHUNK)
    counted = Chunks(stream.translate)
    monkeypatch.setattr(stream, "translate", counted)
    return counted


def _source(path: Path, lines: int = 5 * CHUNK + 3) -> Path:
    path.write_text("".join(f"{SENTENCES[i % len(SENTENCES)]}\n" for i in range(lines)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def whole(trained_tiny, tmp_path_factory) -> str:
    """What one uninterrupted run writes for _source's lines."""
    folder = tmp_path_factory.mktemp("whole")
    result = _translate(trained_tiny.out / "checkpoints" / "best.pt", _source(folder / "big.en"), folder / "big.de")
    assert result.exit_code == 0, result.output
    return (folder / "big.de").read_text(encoding="utf-8")


def _translate(checkpoint, source: Path, output: Path, *options: str):
    return runner.invoke(app, ["translate", "-c", str(checkpoint), "-i", str(source), "-o", str(output), *options])


def _stopped_at(chunk: int, checkpoint: Path, tmp_path: Path, chunks: Chunks) -> tuple[Path, Path]:
    """_source's lines in big.en, their translation into big.de stopped in its `chunk`-th chunk."""
    source, output = _source(tmp_path / "big.en"), tmp_path / "big.de"
    chunks.stop_at(chunk)
    assert _translate(checkpoint, source, output).exit_code == 130
    return source, output


def _partial(output: Path) -> tuple[Path, Path]:
    return output.with_name(f".{output.name}.partial"), output.with_name(f".{output.name}.partial.json")


def test_a_stopped_translation_goes_on_where_it_stopped_and_writes_what_one_run_writes(trained_tiny, tmp_path, chunks,
                                                                                      whole):
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    source = _source(tmp_path / "big.en")
    assert whole.count("\n") == 5 * CHUNK + 3

    output = tmp_path / "big.de"
    chunks.stop_at(3)  # Ctrl-C while the third chunk is translated
    stopped = _translate(checkpoint, source, output)
    assert stopped.exit_code == 130 and "Traceback" not in stopped.output
    assert stopped.output.strip() == (f"interrupted; the {2 * CHUNK} lines translated are kept (.big.de.partial); "
                                      f"the same command goes on from line {2 * CHUNK + 1}")
    partial, record = _partial(output)
    assert not output.exists() and partial.read_text(encoding="utf-8") == "".join(whole.splitlines(True)[:2 * CHUNK])
    assert json.loads(record.read_text(encoding="utf-8"))["lines"] == 2 * CHUNK

    chunks.stop_at(0)
    went_on = _translate(checkpoint, source, output)
    assert went_on.exit_code == 0, went_on.output
    assert chunks.calls == 4  # the chunks after line 32 alone: 3 of 16 lines and one of 3
    assert f"went on after line {2 * CHUNK}" in went_on.output
    assert output.read_text(encoding="utf-8") == whole
    assert not partial.exists() and not record.exists()


def test_a_stopped_translation_into_a_compressed_file_goes_on_and_is_compressed_once_whole(trained_tiny, tmp_path,
                                                                                           chunks, whole):
    """The partial file is plain text, gone on from as any; the output named .gz appears compressed."""
    import gzip

    checkpoint, output = trained_tiny.out / "checkpoints" / "best.pt", tmp_path / "big.de.gz"
    source = _source(tmp_path / "big.en")
    chunks.stop_at(2)
    assert _translate(checkpoint, source, output).exit_code == 130 and not output.exists()
    chunks.stop_at(0)
    assert _translate(checkpoint, source, output).exit_code == 0 and chunks.calls == 5
    assert gzip.decompress(output.read_bytes()).decode() == whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.de.gz", "big.en"]


def test_sigterm_ends_the_run_as_ctrl_c_does_keeping_its_lines(trained_tiny, tmp_path, chunks, whole, monkeypatch):
    """A scheduler preempting the job sends SIGTERM: the run records its lines and ends with Ctrl-C's
    message and exit code, instead of dying where it stands; the handler before it is put back."""
    import os
    import signal

    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    source, output = _source(tmp_path / "big.en"), tmp_path / "big.de"
    before = signal.getsignal(signal.SIGTERM)
    translate = chunks.translate

    def preempted(*args, **kwargs):  # the third chunk's translation is where the signal arrives
        if chunks.calls == 3:  # (counted before the call)
            os.kill(os.getpid(), signal.SIGTERM)
        return translate(*args, **kwargs)

    monkeypatch.setattr(chunks, "translate", preempted)
    stopped = _translate(checkpoint, source, output)
    assert stopped.exit_code == 130 and f"the {2 * CHUNK} lines translated are kept" in stopped.output
    assert signal.getsignal(signal.SIGTERM) is before
    monkeypatch.setattr(chunks, "translate", translate)
    assert _translate(checkpoint, source, output).exit_code == 0
    assert output.read_text(encoding="utf-8") == whole


def test_a_second_run_into_the_same_output_is_refused_while_the_first_runs(trained_tiny, tmp_path, chunks, whole,
                                                                          monkeypatch):
    """Two runs appending to one partial file would interleave their lines: while one translates
    into big.de, the same command again (another process's, here a second open of the lock) is a
    one-line error naming the holder, and changes nothing. A lock file left by a killed run holds
    no one back, and a finished run leaves none."""
    import os

    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    source, output = _source(tmp_path / "big.en"), tmp_path / "big.de"
    lock = output.with_name(".big.de.lock")
    lock.write_text("999999\n", encoding="utf-8")  # what SIGKILL leaves: the file, not the lock
    translate, refusals = chunks.translate, []

    def meanwhile(*args, **kwargs):
        if chunks.calls == 3:  # two chunks written: a second run starts
            partial = _partial(output)[0].read_bytes()
            refusals.append(_translate(checkpoint, source, output))
            assert _partial(output)[0].read_bytes() == partial
        return translate(*args, **kwargs)

    monkeypatch.setattr(chunks, "translate", meanwhile)
    first = _translate(checkpoint, source, output)
    assert first.exit_code == 0, first.output
    [second] = refusals
    one_line_error(second, f"{output}: another nmt is translating into it (pid {os.getpid()})")
    assert output.read_text(encoding="utf-8") == whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.de", "big.en"]

    import nmt.file_lock

    def refused(*args, **kwargs):  # a folder one may not write in: the error names the output, not its lock
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(nmt.file_lock, "open", refused, raising=False)
    one_line_error(_translate(checkpoint, source, tmp_path / "again.de"),
                   f"{tmp_path / 'again.de'}: cannot write there (Permission denied)")


def test_what_a_killed_process_wrote_past_its_record_is_cut_and_translated_again(trained_tiny, tmp_path, chunks,
                                                                                  whole):
    """A process killed while writing (SIGKILL, a lost machine) leaves lines after its last record,
    the last one perhaps cut short: they are dropped, and translated again."""
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    source, output = _stopped_at(2, checkpoint, tmp_path, chunks)
    partial, _ = _partial(output)
    with partial.open("a", encoding="utf-8") as f:
        f.write("a line of the next chunk\nand half a li")
    chunks.stop_at(0)
    assert _translate(checkpoint, source, output).exit_code == 0
    assert chunks.calls == 5  # every chunk after the first: lines 17-83
    assert output.read_text(encoding="utf-8") == whole


def test_other_settings_or_an_edited_source_are_one_line_errors_and_keep_what_was_done(trained_tiny, tmp_path, chunks):
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    source, output = _stopped_at(3, checkpoint, tmp_path, chunks)
    partial, record = _partial(output)
    kept = partial.read_bytes()

    beam = _translate(checkpoint, source, output, "--beam-size", "5")
    one_line_error(beam, "stopped after line 32", "decode.beam_size 4, now 5", "delete .big.de.partial to start over")
    jsonl = _translate(checkpoint, source, output, "--output-format", "jsonl")
    one_line_error(jsonl, "output_format plain, now jsonl")
    lines = source.read_text(encoding="utf-8").splitlines(True)
    source.write_text("".join(lines[:5] + ["A cat sleeps.\n"] + lines[6:]), encoding="utf-8")  # a line already translated
    edited = _translate(checkpoint, source, output)
    one_line_error(edited, f"{source}: changed in its first 32 lines")
    assert partial.read_bytes() == kept and not output.exists()

    source.write_text("".join(lines[:40] + ["A cat sleeps.\n"] + lines[41:]), encoding="utf-8")  # one not yet
    chunks.stop_at(0)
    faster = _translate(checkpoint, source, output, "--max-tokens", "64")  # batches change speed, not lines
    assert faster.exit_code == 0, faster.output
    assert chunks.calls == 4 and output.read_text(encoding="utf-8").count("\n") == len(lines)
    assert not partial.exists() and not record.exists()


def test_a_glossary_or_memory_changed_since_the_stop_is_a_one_line_error(trained_tiny, tmp_path, chunks):
    """The files decoding settings name shape the output as the settings do: edited between the runs
    (size or time of change), going on is refused, naming the setting. A memory given as a path
    stem is the files it begins."""
    import os

    from nmt.decode.resumable import model_files

    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    glossary = tmp_path / "terms.tsv"
    glossary.write_text("dog\tHund\n", encoding="utf-8")
    source, output = _source(tmp_path / "big.en"), tmp_path / "big.de"
    chunks.stop_at(3)
    assert _translate(checkpoint, source, output, "--glossary", str(glossary)).exit_code == 130
    glossary.write_text("dog\tHündchen\n", encoding="utf-8")
    one_line_error(_translate(checkpoint, source, output, "--glossary", str(glossary)),
                   "the files of decode.glossary changed since")
    assert _partial(output)[0].exists() and not output.exists()

    (tmp_path / "memory.en").write_text("A dog.\n", encoding="utf-8")
    (tmp_path / "memory.de").write_text("Ein Hund.\n", encoding="utf-8")
    [stem] = model_files([tmp_path / "memory"])
    assert sorted(stem["files"]) == ["memory.de", "memory.en"]
    os.utime(tmp_path / "memory.de", ns=(0, 0))
    assert model_files([tmp_path / "memory"]) != [stem]


def test_lines_are_numbered_and_refused_requests_counted_across_the_stop(trained_tiny, tmp_path, chunks):
    """jsonl requests: a line refused before the stop and one after are both counted at the end
    (exit code 1), and the warning about the later one names its line in the whole file."""
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    requests = [json.dumps({"text": SENTENCES[i % len(SENTENCES)]}) for i in range(3 * CHUNK)]
    requests[4] = requests[2 * CHUNK + 4] = "{not json"
    source = tmp_path / "requests.jsonl"
    source.write_text("\n".join(requests) + "\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    options = ["--input-format", "jsonl", "--output-format", "jsonl"]
    chunks.stop_at(2)
    assert _translate(checkpoint, source, output, *options).exit_code == 130
    chunks.stop_at(0)
    went_on = _translate(checkpoint, source, output, *options)
    assert went_on.exit_code == 1
    assert f"line {2 * CHUNK + 5}:" in went_on.output and "line 5:" not in went_on.output
    assert "2 line(s) could not be translated" in went_on.output
    answers = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(answers) == 3 * CHUNK and [i for i, a in enumerate(answers) if "error" in a] == [4, 2 * CHUNK + 4]


def test_back_translation_goes_on_too_and_a_stop_before_any_line_leaves_nothing(trained_tiny, tmp_path, chunks):
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    mono = _source(tmp_path / "mono.en", 3 * CHUNK)
    assert runner.invoke(app, ["back-translate", "-c", str(checkpoint), "-i", str(mono), "-o", str(tmp_path / "whole")]).exit_code == 0
    chunks.stop_at(1)  # before the first chunk is done: nothing to keep
    stem = str(tmp_path / "bt")
    assert runner.invoke(app, ["back-translate", "-c", str(checkpoint), "-i", str(mono), "-o", stem]).exit_code == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mono.en", "whole.de", "whole.en"]
    chunks.stop_at(2)
    assert runner.invoke(app, ["back-translate", "-c", str(checkpoint), "-i", str(mono), "-o", stem]).exit_code == 130
    assert _partial(tmp_path / "bt.de")[0].exists() and not (tmp_path / "bt.en").exists()
    chunks.stop_at(0)
    assert runner.invoke(app, ["back-translate", "-c", str(checkpoint), "-i", str(mono), "-o", stem]).exit_code == 0
    assert chunks.calls == 2
    for lang in ("de", "en"):
        assert (tmp_path / f"bt.{lang}").read_bytes() == (tmp_path / f"whole.{lang}").read_bytes()


def test_a_full_disk_is_a_one_line_error_naming_the_output_and_what_fitted_is_gone_on_from(trained_tiny, tmp_path,
                                                                                          chunks, monkeypatch, whole):
    import nmt.decode.resumable as resumable

    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    source = _source(tmp_path / "big.en")
    output = tmp_path / "big.de"
    fits = len("".join(whole.splitlines(True)[:2 * CHUNK + 5])) + 4  # 37 lines and a few characters of the 38th
    monkeypatch.setattr(resumable, "open", lambda name, mode, **kw: FillingDisk(open(name, mode, **kw), fits),
                        raising=False)
    one_line_error(_translate(checkpoint, source, output), f"{output}: cannot write there (No space left on device)")
    assert not output.exists() and _partial(output)[0].read_text(encoding="utf-8") == whole[:fits]
    monkeypatch.delattr(resumable, "open")  # room made
    chunks.stop_at(0)
    assert _translate(checkpoint, source, output).exit_code == 0
    assert chunks.calls == 3  # lines 38-83
    assert output.read_text(encoding="utf-8") == whole


def test_distillation_goes_on_from_the_teachers_translations_and_writes_what_one_run_writes(trained_tiny, tmp_path,
                                                                                           chunks):
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    corpus = _source(tmp_path / "corpus.en", 3 * CHUNK + 2)

    def distill(stem: str):
        return runner.invoke(app, ["distill", "-c", str(checkpoint), "-i", str(corpus), "-o", str(tmp_path / stem),
                                   "--drop-worst", "0.1"])

    assert distill("whole").exit_code == 0
    chunks.stop_at(3)
    stopped = distill("student")
    assert stopped.exit_code == 130 and f"the {2 * CHUNK} lines translated are kept" in stopped.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".student")) == [
        ".student.teacher.jsonl.partial", ".student.teacher.jsonl.partial.json"]
    chunks.stop_at(0)
    assert distill("student").exit_code == 0
    assert chunks.calls == 2  # lines 33-50
    for suffix in ("en", "de"):
        assert (tmp_path / f"student.{suffix}").read_bytes() == (tmp_path / f"whole.{suffix}").read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_counts_of_the_stopped_run_add_to_the_next_runs_by_name():
    """What the record keeps for the end of the run (refused lines; with --src-lang auto, lines by language)."""
    from nmt.decode.resumable import added

    earlier = {"failed": 1, "sources": {"deu_Latn": 30, "fra_Latn": 2}}
    assert added(earlier, {"failed": 2, "sources": {"deu_Latn": 5, "eng_Latn": 1}}) == {
        "failed": 3, "sources": {"deu_Latn": 35, "fra_Latn": 2, "eng_Latn": 1}}
    assert added({}, {"failed": 0, "sources": {}}) == {"failed": 0, "sources": {}}
    assert earlier == {"failed": 1, "sources": {"deu_Latn": 30, "fra_Latn": 2}}  # not changed in place
