"""The spinners long commands show on a terminal (nmt.console.counter)."""

import io
import re

from rich.console import Console

from nmt import console


def test_a_counter_keeps_one_line_per_counted_thing_however_often_it_is_told(monkeypatch):
    """`nmt prepare`, `translate`, `back-translate` and `distill` tell their counter after every
    chunk or line: each thing counted stays one line on the terminal, updated in place (a line per
    call once made the display grow with the input, and redrawing it slowed translation 12-fold)."""
    screen = io.StringIO()
    monkeypatch.setattr(console, "err", Console(file=screen, force_terminal=True, width=80))
    with console.counter("{task.fields[name]}: {task.completed} done") as count:
        for n in range(1, 51):
            count("lines", n)
        count("pairs", 7)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    last_frame = shown[shown.rindex("lines: 50 done"):]
    assert re.findall(r"(\w+): (\d+) done", last_frame) == [("lines", "50"), ("pairs", "7")]


def test_a_counter_away_from_a_terminal_shows_nothing(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(console, "err", Console(file=screen, force_terminal=False, width=80))
    with console.counter("{task.fields[name]}: {task.completed} done") as count:
        count("lines", 3)
    assert screen.getvalue() == ""


def test_translate_back_translate_and_likelihood_count_their_lines_on_a_terminal(trained_tiny, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from nmt.cli import app

    screen = io.StringIO()
    monkeypatch.setattr(console, "err", Console(file=screen, force_terminal=True, width=80))
    source = tmp_path / "in.en"
    source.write_text("A dog runs.\n\nTwo men talk.\n")
    checkpoint = str(trained_tiny.out / "checkpoints" / "best.pt")
    runner = CliRunner()
    assert runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "out.de")]).exit_code == 0
    assert runner.invoke(app, ["back-translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "bt")]).exit_code == 0
    assert runner.invoke(app, ["likelihood", "-c", checkpoint, "--source", str(source), "--target", str(source),
                               "-o", str(tmp_path / "scores.txt")]).exit_code == 0
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    # the input file's lines counted first: a bar and the time left
    assert "translating: 3 of 3 lines" in shown and "back-translating: 3 of 3 lines" in shown
    assert "scoring: 3 of 3 pairs" in shown
    assert len((tmp_path / "out.de").read_text().splitlines()) == 3


def test_prepare_shows_each_split_read_against_its_pairs_counted_first(tmp_path, monkeypatch):
    """`nmt prepare` on a terminal: every pass over a split (the search for duplicates, then the
    encoding) with a bar to its total, the pairs counted from the files before it starts."""
    from typer.testing import CliRunner

    from nmt.cli import app
    from tests.conftest import TINY, TINY_DATA

    screen = io.StringIO()
    monkeypatch.setattr(console, "err", Console(file=screen, force_terminal=True, width=100))
    settings = [f"--set=output_dir={tmp_path}", f"--set=data.train={TINY_DATA / 'train'}",
                f"--set=data.valid={TINY_DATA / 'valid'}", "--set=data.test=null"]
    runner = CliRunner()
    assert runner.invoke(app, ["tokenizer", str(TINY), *settings]).exit_code == 0
    result = runner.invoke(app, ["prepare", str(TINY), *settings])
    assert result.exit_code == 0, result.output
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    for split, pairs in (("train (finding duplicates)", 48), ("train", 48), ("valid", 8)):
        assert f"preparing {split}: {pairs} of {pairs} pairs read" in shown, shown


def _terminal_shows(command: list[str], stdout_to_terminal: bool, stdout_file) -> str:
    """What a terminal on stderr (and, where asked, on stdout too) shows of `command`, escapes removed."""
    import os
    import pty
    import subprocess

    primary, secondary = pty.openpty()
    with open(stdout_file, "wb") as out:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=secondary if stdout_to_terminal else out,
                                 stderr=secondary)
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the child has gone and closed its end
            break
        if not chunk:
            break
        shown += chunk
    os.close(primary)
    assert child.wait(timeout=60) == 0, shown
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))


def test_translations_to_standard_output_show_the_count_unless_it_is_the_terminal(trained_tiny, tmp_path):
    """`nmt translate -i FILE > out` shows its bar on the terminal; where the translations are
    printed to the terminal, they are the display and no bar is drawn between them."""
    import sys

    source = tmp_path / "in.en"
    source.write_text("A dog runs.\n\nTwo men talk.\n")
    command = [sys.executable, "-m", "nmt", "translate", "-c", str(trained_tiny.out / "checkpoints" / "best.pt"),
               "-i", str(source)]
    redirected = _terminal_shows(command, False, tmp_path / "out.de")
    assert "translating: 3 of 3 lines" in redirected
    assert len((tmp_path / "out.de").read_text().splitlines()) == 3
    on_terminal = _terminal_shows(command, True, tmp_path / "unused")
    assert "translating" not in on_terminal and len([line for line in on_terminal.splitlines() if line.strip()]) == 2


def test_training_the_tokenizer_shows_a_spinner_and_leaves_no_line_behind(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from nmt.cli import app
    from tests.conftest import TINY

    screen = io.StringIO()
    monkeypatch.setattr(console, "err", Console(file=screen, force_terminal=True, width=100))
    result = CliRunner().invoke(app, ["tokenizer", str(TINY), "--set", f"output_dir={tmp_path / 'run'}"])
    assert result.exit_code == 0, result.output
    shown = screen.getvalue()
    assert "training the tokenizer (sentencepiece)" in shown
    last = shown[shown.rindex("training the tokenizer"):]
    assert "\x1b[2K" in last and "trained " in last  # the spinner's line erased, the summary written after it



def test_export_import_and_average_show_a_spinner_while_they_work(trained_tiny, tmp_path, monkeypatch):
    """Each reads and writes whole models (minutes at a few billion weights) and shows nothing else
    until it ends: a spinner says what it is doing, and its line is erased before the summary.
    (The import itself is replaced by one that only answers: what is tested is what the command
    shows around it; tests/export tests the import.)"""
    from typer.testing import CliRunner

    import nmt.export.huggingface_import
    from nmt.cli import app

    monkeypatch.setattr(nmt.export.huggingface_import, "import_with_recipe", lambda directory, *rest: [f"imported {directory}"])
    checkpoints = trained_tiny.out / "checkpoints"
    for command, doing, done in (
        (["export", str(checkpoints / "best.pt"), "-o", str(tmp_path / "ct2")], "exporting", "exported"),
        (["import", str(tmp_path / "a-model"), "-o", str(tmp_path / "imported.pt")], "importing", "imported"),
        (["average", str(checkpoints / "best.pt"), str(checkpoints / "last.pt"), "-o", str(tmp_path / "mean.pt")],
         "averaging checkpoints", "averaged 1 checkpoint"),  # best.pt and last.pt: one file (one update)
    ):
        screen = io.StringIO()
        monkeypatch.setattr(console, "err", Console(file=screen, force_terminal=True, width=200))
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, result.output
        shown = screen.getvalue()
        last = shown[shown.rindex(doing):]
        assert "\x1b[2K" in last and done in last[len(doing):], shown  # erased, then the summary
