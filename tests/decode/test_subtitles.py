"""Subtitles (nmt.decode.subtitles): reading cues and breaking lines by hand, and `nmt translate` of
SubRip and WebVTT files with the tiny model, each cue's text against the same text translated as
one line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.subtitles import Cue, read_cues, rewrapped, sentences_over_cues, shared, subtitle_format, written
from nmt.decode.translate import translate_lines
from nmt.errors import NmtError

SUBRIP = """1
00:00:01,000 --> 00:00:04,000
A black dog leaps
over a log.


2
00:00:05,000 --> 00:00:07,500 X1:10
<i>A dog runs.</i>

3
00:00:08,000 --> 00:00:10,000
...
"""

WEBVTT = """WEBVTT - a talk

NOTE written by hand

STYLE
::cue { color: yellow }

intro
00:01.000 --> 00:04.000 align:start
A black dog leaps
over a log.
"""


def test_cues_are_the_text_after_each_timing_and_the_rest_stays():
    lines = SUBRIP.splitlines()
    cues = read_cues(lines, "srt", "in.srt")
    assert [(c.first, c.count, c.text) for c in cues] == [
        (2, 2, "A black dog leaps over a log."), (8, 1, "<i>A dog runs.</i>"), (12, 1, "...")]
    assert written(lines, cues, ["X Y Z.", "<i>Q.</i>", "..."]) == [
        "1", "00:00:01,000 --> 00:00:04,000", "X Y", "Z.", "", "", "2", "00:00:05,000 --> 00:00:07,500 X1:10",
        "<i>Q.</i>", "", "3", "00:00:08,000 --> 00:00:10,000", "..."]
    [cue] = read_cues(WEBVTT.splitlines(), "vtt", "in.vtt")  # header, NOTE and STYLE copied
    assert cue.first == 9 and cue.text == "A black dog leaps over a log."
    assert [subtitle_format(name) for name in ("a.en.SRT", "b.vtt.gz", "c.txt", "-")] == ["srt", "vtt", None, None]


@pytest.mark.parametrize("text, kind, error", [
    ("1\nA dog runs.\n", "srt", "in: line 1: a subtitle block without a timing line"),
    ("1\n00:00:01,000 --> 00:00:02,000\nA dog.\n\nNOTE x\n", "srt", "in: line 5: a subtitle block without"),
    ("1\n2\nA dog.\n00:00:01,000 --> 00:00:02,000\n", "srt", "in: line 4: a timing line after text"),
    ("1\n00:00:01,000 --> 00:00:02,000\nA dog.\n", "vtt", "in: line 1: a WebVTT file starts with WEBVTT")])
def test_a_file_that_is_not_subtitles_is_an_error_naming_its_line(text, kind, error):
    with pytest.raises(NmtError, match=error):
        read_cues(text.splitlines(), kind, "in")


def test_a_translation_is_broken_over_the_cues_lines_as_evenly_as_its_words_allow():
    assert rewrapped("Ein schwarzer Hund springt über einen Baumstamm.", 2) == [
        "Ein schwarzer Hund springt", "über einen Baumstamm."]
    assert rewrapped("aa bb cc dd ee ff", 3) == ["aa bb", "cc dd", "ee ff"]
    assert rewrapped("Hallo.", 2) == ["Hallo."]  # fewer words than lines: fewer lines, none empty
    assert rewrapped("a  b", 1) == ["a b"]
    for count in (1, 2, 3, 4):
        broken = rewrapped("one two three four five six seven", count)
        assert " ".join(broken) == "one two three four five six seven" and len(broken) == count


def test_a_sentence_that_runs_on_into_the_next_cues_is_read_whole_and_shared_between_them():
    texts = ["I went to the store", "and bought <i>milk</i>", "for my mother.", "<i>Then</i> I left", "- and he came.",
             "\"why?\"", "a", "b", "c", "d", "e."]
    groups = sentences_over_cues([Cue(0, 1, text) for text in texts])
    # a mark, a dash (another speaker), a quote (new speech) or a capital starts anew; at most 4 cues
    assert groups == [[0, 1, 2], [3], [4], [5], [6, 7, 8, 9], [10]]
    assert shared("Ich ging in den Laden und kaufte Milch.", [19, 16]) == ["Ich ging in den Laden", "und kaufte Milch."]
    assert shared("a b c d e f", [1, 1, 1]) == ["a b", "c d", "e f"]
    assert shared("a b c d e f", [10, 1, 1]) == ["a b c d", "e", "f"]  # a word at least for each
    assert shared("Ja.", [5, 5]) == ["Ja.", "…"]  # fewer words than cues: none left empty


def test_translate_writes_each_cue_as_its_text_translated_whole(trained_tiny, translator, cfg, tmp_path):
    runner = CliRunner()
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    source = tmp_path / "talk.en.srt"
    source.write_text(SUBRIP, encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "talk.de.srt")])
    assert result.exit_code == 0, result.output
    out = (tmp_path / "talk.de.srt").read_text(encoding="utf-8").splitlines()
    cues = read_cues(out, "srt", "out")
    expected = [hyps[0].text or "" for hyps in translate_lines(translator, [c.text for c in read_cues(
        SUBRIP.splitlines(), "srt", "in")], cfg, markup=[False, True, False])]
    [plain] = translate_lines(translator, ["A black dog leaps over a log."], cfg)
    assert cues[0].text == translator.tgt_tokenizer.decode(plain[0].tokens) and cues[0].count == 2
    assert [c.text for c in cues[1:]] == expected[1:] and cues[1].text.startswith("<i>")
    assert [out[i] for i in (0, 1, 4, 5, 6, 7, 9, 10, 11)] == [SUBRIP.splitlines()[i] for i in (0, 1, 4, 5, 6, 7, 9, 10, 11)]
    # line by line, as plain text: numbers and timings copied, each line translated apart
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "lines"),
                                 "--input-format", "plain"])
    assert result.exit_code == 0 and len((tmp_path / "lines").read_text().splitlines()) == len(SUBRIP.splitlines())
    # WebVTT: its blocks copied, each cue translated whole
    source = tmp_path / "talk.vtt"
    source.write_text(WEBVTT, encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "out.vtt")])
    assert result.exit_code == 0, result.output
    out = (tmp_path / "out.vtt").read_text(encoding="utf-8").splitlines()
    assert out[:9] == WEBVTT.splitlines()[:9] and " ".join(out[9:]) == cues[0].text
    # a sentence over two cues: translated whole, its translation shared between them
    source = tmp_path / "run_on.srt"
    source.write_text("1\n00:00:01,000 --> 00:00:02,000\nA black dog leaps\n\n2\n00:00:02,000 --> 00:00:03,000\n"
                      "over a log.\n", encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "run_on.de.srt")])
    assert result.exit_code == 0, result.output
    first, second = read_cues((tmp_path / "run_on.de.srt").read_text(encoding="utf-8").splitlines(), "srt", "out")
    assert first.text and second.text and f"{first.text} {second.text}" == cues[0].text
    # not subtitles: one line naming the file and line, exit 2, nothing written
    (tmp_path / "bad.srt").write_text("1\nA dog.\n", encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "bad.srt"),
                                 "-o", str(tmp_path / "bad.de.srt")])
    assert result.exit_code == 2 and "bad.srt: line 1: a subtitle block without a timing line" in result.output
    assert not (tmp_path / "bad.de.srt").exists() and "Traceback" not in result.output


def test_a_file_from_windows_is_written_back_with_its_byte_order_mark_and_line_ends(trained_tiny, tmp_path):
    """A subtitle file or a Markdown page translated whole comes back laid out as it came: CRLF
    line ends and a UTF-8 BOM (as Windows tools write subtitles) stay, LF alone stays LF; its
    texts are those of the same file written with LF."""
    runner = CliRunner()
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    written = {}
    for name, data in {"windows.srt": b"\xef\xbb\xbf" + SUBRIP.replace("\n", "\r\n").encode(), "unix.srt": SUBRIP.encode(),
                       "windows.md": "# A dog\r\n\r\nA black dog leaps over a log.\r\n".encode(),
                       "unix.md": b"# A dog\n\nA black dog leaps over a log.\n"}.items():
        (tmp_path / name).write_bytes(data)
        result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name), "-o", str(tmp_path / f"de.{name}")])
        assert result.exit_code == 0, result.output
        written[name] = (tmp_path / f"de.{name}").read_bytes()
    assert written["windows.srt"].startswith(b"\xef\xbb\xbf1\r\n") and written["windows.srt"].count(b"\r\n") == SUBRIP.count("\n")
    assert written["windows.srt"][3:].replace(b"\r\n", b"\n") == written["unix.srt"] and b"\r" not in written["unix.srt"]
    assert written["windows.md"].replace(b"\r\n", b"\n") == written["unix.md"] and written["windows.md"].count(b"\r\n") == 3


def test_a_named_pipe_is_read_once_and_written_with_line_feeds(trained_tiny, tmp_path):
    """A subtitle file given as a named pipe (`-i <(...)`, mkfifo) is read once: its layout is not
    looked up by opening it again, which would wait for a writer that has gone."""
    import os
    import threading

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    pipe = tmp_path / "talk.srt"
    os.mkfifo(pipe)
    finished, waited = threading.Event(), []

    def writer():
        with open(pipe, "w", encoding="utf-8", newline="") as f:
            f.write(SUBRIP.replace("\n", "\r\n"))
        if not finished.wait(20):  # the reader opened the pipe again: give it an end, so the test ends
            waited.append(True)
            with open(pipe, "w"):
                pass

    thread = threading.Thread(target=writer)
    thread.start()
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(pipe), "-o", str(tmp_path / "de.srt")])
    finished.set()
    thread.join()
    assert result.exit_code == 0, result.output
    assert not waited and b"\r" not in (tmp_path / "de.srt").read_bytes()
