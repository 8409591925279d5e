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
    screen.seek(0)
    screen.truncate()
    to_terminal = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source)])  # the lines are the display
    assert to_terminal.exit_code == 0 and len(to_terminal.stdout.splitlines()) == 3
    assert "translating" not in screen.getvalue()
