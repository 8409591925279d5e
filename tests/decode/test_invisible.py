"""Invisible format characters the source vocabulary lacks, left out of words before the model
reads them (nmt.decode.text.invisible): by hand, against Unicode's own list, and through
translation with the tiny model."""

from __future__ import annotations

import sys
import unicodedata

from nmt.decode.text.invisible import _FORMAT, without_invisible
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
