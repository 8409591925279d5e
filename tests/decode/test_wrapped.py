"""Wrapped text (nmt.decode.wrapped): paragraphs and list items read by hand, and `nmt translate
--input-format wrapped` with the tiny model, each paragraph against its text translated as one line."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.translate import translate_lines
from nmt.decode.wrapped import Wrapped

TEXT = """A black dog leaps over
a log. A dog runs.

- Asian man sweeping
the walkway.
  an indented line
# A heading

end"""


def test_paragraphs_and_list_items_are_units_and_keep_their_lines():
    wrapped = Wrapped.read(TEXT.splitlines())
    assert wrapped.texts == ["A black dog leaps over a log. A dog runs.", "- Asian man sweeping the walkway.",
                             "an indented line", "# A heading", "end"]
    assert wrapped.numbers == [1, 4, 6, 7, 9]
    assert wrapped.write(["X Y Z W.", "- Q R S.", "  T", "# U", "V"]) == [
        "X Y", "Z W.", "", "- Q R", "S.", "  T", "# U", "", "V"]


MARKDOWN = """> A quoted paragraph
> over two lines.
>
> - a quoted item
- [ ] a task
  - a nested item
    that goes on

`term`
:   its definition
    goes on

Street 1\\
Town  
Land"""


def test_markdowns_quotes_tasks_nested_items_definitions_and_line_breaks():
    wrapped = Wrapped.read(MARKDOWN.splitlines(), markdown=True)
    assert wrapped.texts == ["> A quoted paragraph over two lines.", "> - a quoted item", "- [ ] a task",
                             "- a nested item that goes on", "`term`", ":   its definition goes on", "Street 1", "Town",
                             "Land"]
    assert wrapped.write(["> Ein zitierter Absatz über zwei Zeilen.", "> - ein Punkt", "- [ ] eine Aufgabe",
                          "- ein Punkt darin, der weitergeht", "`term`", ":   seine Erklärung geht weiter", "Straße 1",
                          "Stadt", "Land"]) == [
        "> Ein zitierter Absatz", "> über zwei Zeilen.", ">", "> - ein Punkt", "- [ ] eine Aufgabe",
        "  - ein Punkt darin,", "    der weitergeht",  # the nested item's indentation kept
        "", "`term`", ":   seine Erklärung", "    geht weiter", "", "Straße 1\\", "Stadt  ", "Land"]


def test_translate_reads_each_paragraph_whole_and_wraps_it_again(trained_tiny, translator, cfg, tmp_path):
    source = tmp_path / "book.txt"
    source.write_text(TEXT + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(source), "-o", str(tmp_path / "out.txt"), "--input-format", "wrapped"])
    assert result.exit_code == 0, result.output
    out = (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()
    assert len(out) == len(TEXT.splitlines()) and out[2] == "" and out[7] == ""
    wrapped = Wrapped.read(TEXT.splitlines())
    expected = [hyps[0].text or translator.tgt_tokenizer.decode(hyps[0].tokens)
                for hyps in translate_lines(translator, wrapped.texts, cfg)]
    assert " ".join(out[0:2]) == expected[0] and " ".join(out[3:5]) == expected[1] and out[3].startswith("- ")


def test_a_markdown_code_span_is_never_broken_nor_its_spaces_merged():
    wrapped = Wrapped.read(["Run the command", "that is shown", "below now."], markdown=True)
    out = wrapped.write(["Führen Sie `git push -u origin <name>` aus, mit `a  b` darin"])
    assert any("`git push -u origin <name>`" in line for line in out) and any("`a  b`" in line for line in out)


@pytest.mark.parametrize("translation", ["Einstellungen > Datenschutz > Cookies und mehr", "Werte - 1. oder 2. - sind # 3",
                                         "Ein Wert === ein anderer | und ``` hier"])
def test_a_markdown_line_is_never_broken_where_the_next_would_start_a_block(translation):
    """A quote's ">", a list's "- " or "1. ", a heading's "# " or "===" starting a line would make it a
    block of its own (Settings > Privacy had become a quote)."""
    out = Wrapped.read(["A line", "and another", "and a third"], markdown=True).write([translation])
    assert " ".join(out) == translation
    assert not any(re.match(r">|#|[-*+] |\d+[.)] |=|```|\|", line) for line in out[1:]), out


def test_a_text_written_a_sentence_a_line_is_written_so_again():
    """Lines that each end a sentence (semantic line breaks, as AsciiDoc's and many Markdown
    writers' style has it): the translation a sentence a line, however many it has; a colon
    breaks none, nor does an ellipsis at the start; text wrapped at a width is balanced over its
    lines as before."""
    by_sentence = Wrapped.read(["- The first sentence is here.", "  The second, with `a code span.` in it.", "  A third"],
                               markdown=True)
    assert by_sentence.write(by_sentence.texts) == by_sentence.lines
    out = by_sentence.write(["- Der erste Satz (in Klammern.) Der zweite, mit `a code span.` darin: hier. ... und mehr! "
                             "Ein vierter"])
    assert out == ["- Der erste Satz (in Klammern.)", "  Der zweite, mit `a code span.` darin: hier.", "  ... und mehr!",
                   "  Ein vierter"]
    wrapped = Wrapped.read(["A text wrapped at a width that happens", "to run on over the lines."], markdown=True)
    assert wrapped.write(["Ein Text, der umbrochen ist. Er läuft über die Zeilen weiter."]) == [
        "Ein Text, der umbrochen ist. Er", "läuft über die Zeilen weiter."]
    chinese = Wrapped.read(["第一句。", "第二句。"], markdown=True)  # (written without spaces: a line's end would show as one)
    assert chinese.write(["第一句。第二句。"]) == ["第一句。第二句。"]


def test_text_wrapped_at_a_width_and_read_line_by_line_is_told_of_the_wrapped_format(translator, cfg):
    """A book wrapped at 60 columns given line by line (the plain default of a .txt file): a
    warning names its first wrapped paragraph's line and --input-format wrapped, once; a corpus's
    sentences a line, and paragraphs written a sentence a line, get none."""
    import textwrap

    from nmt.decode.stream import translate_stream
    from nmt.decode.wrapped import wrapped_paragraph

    sentences = ["A man in a blue shirt is standing on a ladder cleaning windows.",
                 "Two young guys with shaggy hair look at their hands while hanging out in the yard.",
                 "A little girl climbing into a wooden playhouse.", "Several men in hard hats are operating a giant pulley system.",
                 "A man in green holds a guitar while the other man observes his shirt.", "A dog runs."]
    book = ["Chapter 1", ""]
    for start in (0, 3):
        book += textwrap.wrap(" ".join(sentences[start:start + 3]), 60) + [""]
    assert wrapped_paragraph(book) == 2 and wrapped_paragraph(sentences) is None
    assert wrapped_paragraph([*sentences[:3], "", *sentences[3:]]) is None  # (a sentence a line)
    warnings = []
    assert len(list(translate_stream(translator, book, cfg, warn=warnings.append))) == len(book)
    assert [w for w in warnings if "wrapped" in w] == [
        "line 3: text wrapped at a width, read line by line: --input-format wrapped (or a document's format) "
        "translates each paragraph whole and wraps it again over its lines"]
    warnings.clear()
    list(translate_stream(translator, sentences, cfg, warn=warnings.append))
    assert not [w for w in warnings if "wrapped" in w]
