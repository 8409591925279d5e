"""Numbers in the target language's marks (nmt.decode.text.number_marks): the readings by hand, and
through translate_lines with the tiny English-German model."""

from __future__ import annotations

import pytest

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.number_marks import written_for
from nmt.decode.translate import translate_lines


@pytest.mark.parametrize("span, source, target, word_after, written", [
    ("1,000", "en", "de", "", "1.000"),  # German reads "1,000" as one with three decimals
    ("1,234,567.89", "en", "de", "", "1.234.567,89"),
    ("3.5 ft", "en", "de", "", "3,5 ft"),  # a unit in the span
    ("$4.99", "en", "de", "", "$4,99"),  # a currency: its sign keeps its place
    ("2.5%", "en", "fr", "", "2,5%"),
    ("3.5", "en", "de", "million", "3,5"),  # a word that measures after it
    ("3.5", "en", "de", "", "3.5"),  # bare: a version, a section ("Python 3.5")
    ("3.5", "en", "de", "is", "3.5"),
    ("2.1.3", "en", "de", "feet", "2.1.3"),
    ("10.30.2020", "en", "de", "", "10.30.2020"),  # a date
    ("7:15 AM", "en", "de", "", "7:15 AM"),
    ("2,000-3,000", "en", "de", "", "2,000-3,000"),  # a range: left whole
    ("2500", "en", "de", "", "2500"),  # no separator: none added
    ('"1,000"', "en", "de", "", '"1.000"'),  # in quotes or brackets, which go with a number they hold alone
    ("(2.5%)", "en", "de", "", "(2,5%)"),
    ("1,5", "en", "de", "", "1,5"),  # not English's grouping of three digits
    ("25,000", "en", "fr", "", "25\u202f000"),  # French's narrow no-break space
    ("1,000", "en", "es", "", "1000"),  # Spanish groups from 10 000 on
    ("10,000", "en", "es", "", "10.000"),
    ("1.234,5 kg", "de", "en", "", "1,234.5 kg"),
    ("2,5", "de", "en", "Prozent", "2.5"),
    ("1 000", "fr", "de", "", "1.000"),  # a plain space groups where a no-break one does
    ("1,000", "en", "zh", "", "1,000"),  # the same marks
    ("1,000", "en", "xx", "", "1,000"),  # a language without an entry
    ("1,000", None, "de", "", "1,000"),
])
def test_a_number_is_rewritten_where_its_reading_is_sure(span, source, target, word_after, written):
    assert written_for(span, source, target, word_after) == written


def test_a_translation_writes_its_copied_numbers_in_german(translator, cfg):
    lines = ["A man pays 1,000 dollars.", "A dog runs 3.5 km.", "Python 3.5 runs."]
    german = [hypothesis_text(translator.tgt_tokenizer, hyps[0]) for hyps in translate_lines(translator, lines, cfg)]
    assert "1.000" in german[0] and "1,000" not in german[0]
    assert "3,5 km" in german[1] and "3.5" in german[2]
    as_written = cfg.model_copy(update={"number_marks": "source"})
    kept = [hypothesis_text(translator.tgt_tokenizer, hyps[0]) for hyps in translate_lines(translator, lines, as_written)]
    assert "1,000" in kept[0] and "3.5 km" in kept[1]
    assert [line.replace("1,000", "1.000").replace("3.5 km", "3,5 km") for line in kept] == german
