"""Invisible format characters the source vocabulary lacks, left out of words before the model
reads them, and control characters made readable (nmt.decode.text.invisible): by hand, against
Unicode's own list, and through translation with the tiny model."""

from __future__ import annotations

import sys
import unicodedata

from nmt.decode.text.invisible import _CONTROL, _FORMAT, readable_controls, without_invisible
from nmt.decode.translate import translate_lines


def test_format_characters_the_vocabulary_lacks_are_left_out_but_after_a_symbol():
    lacks_them = str.isprintable  # (format characters are not printable)
    assert without_invisible("A fisher\u00adman on a mo\u00adtor\u00adcy\u00adcle.", lacks_them) == (
        "A fisherman on a motorcycle.")
    assert without_invisible("\ufeffA man\u2060 rides\u200d3\u200b \u2060 now.", lacks_them) == "A man rides3  now."
    # after a symbol they stay: an emoji's joiners, a flag's tags
    for text in ("👨\u200d👩\u200d👧 ok", "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"):
        assert without_invisible(text, lacks_them) == text
    # those the vocabulary has stay
    assert without_invisible("می\u200cخواهم a\u00adb", lambda c: c == "\u200c" or c.isprintable()) == "می\u200cخواهم ab"
    assert without_invisible("A plain line.", lacks_them) == "A plain line."


def test_every_format_character_of_the_unicode_database_is_one():
    format_characters = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(format_characters) > 150 and all(_FORMAT.fullmatch(c) for c in format_characters)


def test_a_soft_hyphen_in_a_word_changes_nothing_in_the_translation(translator, cfg):
    assert translator.src_tokenizer.unk_id() in translator.src_tokenizer.encode("\u00ad")
    lines = ["A black dog leaps over a log.", "A black dog le\u00adaps over a l\u00adog.",
             "A dog named Rex\u00adford runs.", "A dog named Rexford runs.", "\u00ad\u2060 ...",
             "A black dog \u2060 leaps over a log."]
    out = translate_lines(translator, lines, cfg)
    assert out[1][0].tokens == out[0][0].tokens
    # the names rule reads the word without it, and writes it so
    assert out[2][0].tokens == out[3][0].tokens and out[2][0].text == out[3][0].text
    assert out[4][0].text == lines[4]  # nothing to translate: the line as it stands
    assert out[5][0].tokens == out[0][0].tokens  # one alone between spaces goes too


def test_control_characters_become_spaces_and_c1_ones_their_windows_1252_characters():
    assert readable_controls("Two men\x0bare\x00talking\x1f\x7fnow.") == "Two men are talking  now."
    assert readable_controls("A dog\x92s ball, \x93red\x94 \x96 round\x85 \x80 5") == "A dog’s ball, “red” – round… € 5"
    assert readable_controls("a\x81b\x8dc\x8fd\x90e\x9df") == "a b c d e f"  # nothing there in Windows-1252
    for text in ("Tabs\tstay.", "A line.\r", "Ünïcödé “as is” …", ""):
        assert readable_controls(text) == text


def test_every_control_character_of_the_unicode_database_but_tab_and_line_ends_is_one():
    controls = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cc"}
    assert controls - {"\t", "\n", "\r"} == {chr(c) for c in range(0x100) if _CONTROL.fullmatch(chr(c))}


def test_a_line_break_from_a_presentation_and_a_mangled_quote_translate_as_typed(translator, cfg, monkeypatch):
    from nmt.decode import translate

    lines = ["A black dog leaps over a log.", "A black dog\x0bleaps over\x00a log.", "A man\x92s dog leaps."]
    assert translator.src_tokenizer.encode("dog\x0bleaps") == translator.src_tokenizer.encode("dogleaps")  # joined
    read = []  # what the vocabulary's test of characters is given (the tiny vocabulary lacks ’ as it lacks \x92)
    monkeypatch.setattr(translate, "without_invisible", lambda text, reads: read.append(text) or without_invisible(text, reads))
    out = translate_lines(translator, lines, cfg)
    assert out[1][0].tokens == out[0][0].tokens
    assert read == ["A black dog leaps over a log.", "A black dog leaps over a log.", "A man’s dog leaps."]
