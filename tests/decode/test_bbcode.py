"""BBCode as inline markup and back (nmt.decode.text.bbcode): tags around words become codes the
markup keeps around the words aligned to them, a tag alone or with a path inside a point."""

from __future__ import annotations

import pytest

from nmt.decode.text.bbcode import bbcode_markup, from_bbcode_markup


@pytest.mark.parametrize("text, markup", [
    ("A man in a [b]blue[/b] shirt & a <hat>.", "A man in a <f1>blue</f1> shirt &amp; a &lt;hat&gt;."),
    ("Two [color=red]dogs[/color] play [i]in [u]the[/u] snow[/i].", "Two <f1>dogs</f1> play <f2>in <f3>the</f3> snow</f2>."),
    ("Press [url=https://a.org]here[/url], or [url]https://b.org[/url].", "Press <f1>here</f1>, or <p2/>."),
    ("Line[br]two [img]res://a.png[/img] [1] [sic]", "Line<p1/>two <p2/> [1] [sic]"),
    ("[b]closed, [i]crossed[/b][/i] [u]never", "<f1>closed, <p2/>crossed</f1><p3/> <p4/>never"),
    ("[list][*]A dog[*]A cat[/list]", "<f1><p2/>A dog<p3/>A cat</f1>")])
def test_bbcode_is_markup_of_codes_and_comes_back_as_it_was(text, markup):
    found, codes = bbcode_markup(text)
    assert found == markup
    assert from_bbcode_markup(found, found, codes) == text


def test_a_translations_codes_are_written_as_the_tags_they_stand_for():
    markup, codes = bbcode_markup("A [b]blue[/b] man & a dog.[br]Line")
    assert from_bbcode_markup("Ein <f1>blauer</f1> Mann &amp; ein Hund. <p2/> Zeile", markup, codes) == (
        "Ein [b]blauer[/b] Mann & ein Hund.[br]Zeile")  # (no space beside a point where the source had none)


def test_brackets_that_are_not_bbcode_are_text():
    assert bbcode_markup("See [1], [sic] and [Enter] [/x]") is None


def test_plain_lines_keep_their_bbcode_and_characters(trained_tiny, tmp_path):
    """`nmt translate` of text lines (a forum's posts): a line's BBCode comes back as tags around
    words, never as the model's codes, and its `&` as written."""
    from typer.testing import CliRunner

    from nmt.cli import app

    (tmp_path / "posts.txt").write_text("a [b]dog[/b] runs & a cat\na cat\n")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(tmp_path / "posts.txt"), "-o", str(tmp_path / "out.txt")])
    assert result.exit_code == 0, result.output
    first, second = (tmp_path / "out.txt").read_text().splitlines()
    assert first.count("[b]") == first.count("[/b]") == 1 and first.index("[b]") < first.index("[/b]")
    assert "<f" not in first and "&amp;" not in first and "[b]" not in second
    assert "line 1: inline markup found" in result.output


def test_a_request_that_leaves_markup_out_keeps_its_bbcode_and_one_that_says_false_reads_text(translator, cfg):
    from nmt.decode.request import Line, LineRequest
    from nmt.decode.translate import translate

    asked = [LineRequest(text="a [b]dog[/b] runs"), LineRequest(text="a [b]dog[/b] runs", markup=False)]
    auto, text = (hyps[0].text or "" for hyps in translate(translator, [Line.of(r) for r in asked], cfg))
    assert auto.count("[b]") == auto.count("[/b]") == 1 and "<f" not in auto
    assert "<f" not in text
