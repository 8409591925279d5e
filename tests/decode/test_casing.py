"""Lines in capitals or Title Case translated in sentence case (decode.normalize_case)."""

from __future__ import annotations

import pytest

from nmt.decode.text.casing import hypothesis_text, sentence_case, source_case
from nmt.decode.search import Hypothesis
from nmt.decode.translate import translate_lines
from nmt.data.tokenizer import output_text


@pytest.mark.parametrize("line, case", [
    ("A MAN RIDES A BIKE.", "upper"), ("TWO DOGS, 3 CATS!", "upper"), ("A Man In A Blue Shirt.", "title"),
    ("A man in Paris.", None), ("NASA launches a rocket.", None), ("I", None), ("Ein Hund", None),
    ("McDonald Sells Two Burgers.", None), ("", None),
])
def test_which_lines_count_as_capitals_or_title_case(line, case):
    assert source_case(line) == case


def test_sentence_case_capitalizes_each_sentence_start():
    assert sentence_case("A MAN RIDES. TWO DOGS PLAY! \"IS IT COLD?\" YES.") == \
        "A man rides. Two dogs play! \"Is it cold?\" Yes."


def test_a_line_in_capitals_is_translated_in_sentence_case_and_answered_in_capitals(translator, trained_tiny):
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    line = "A black dog leaps over a log."
    [normal], [upper], [title] = (translate_lines(translator, [text], cfg)
                                  for text in (line, line.upper(), line.title()))
    assert upper[0].tokens == normal[0].tokens and title[0].tokens == normal[0].tokens
    text = hypothesis_text(translator.tgt_tokenizer, upper[0])
    assert text == output_text(translator.tgt_tokenizer, normal[0].tokens).upper() and text.isupper()
    assert hypothesis_text(translator.tgt_tokenizer, title[0]) == output_text(translator.tgt_tokenizer, normal[0].tokens)
    off = cfg.model_copy(update={"normalize_case": False})
    [raw] = translate_lines(translator, [line.upper()], off)
    assert not raw[0].upper and raw[0].tokens != normal[0].tokens  # what the model does with capitals alone
    [with_prefix] = translate_lines(translator, [line.upper()], cfg, prefixes=["Ein"])
    assert not with_prefix[0].upper  # a prefix is written in the case the output should have


def test_a_sentence_in_capitals_among_others_is_answered_in_capitals_alone(translator, trained_tiny):
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    first, second = "A black dog leaps over a log.", "Two men are sitting on a bench."
    [[one], [two]] = translate_lines(translator, [first, second], cfg)
    out = [output_text(translator.tgt_tokenizer, h.tokens) for h in (one, two)]
    [mixed] = translate_lines(translator, [f"{first.upper()} {second}"], cfg)
    assert hypothesis_text(translator.tgt_tokenizer, mixed[0]) == f"{out[0].upper()} {out[1]}"
    [headline] = translate_lines(translator, [f"{first.title()} {second}"], cfg)  # a title before its text
    assert hypothesis_text(translator.tgt_tokenizer, headline[0]) == f"{out[0]} {out[1]}"
    unsplit = cfg.model_copy(update={"split_sentences": False})
    [whole] = translate_lines(translator, [f"{first.upper()} {second}"], unsplit)
    assert not whole[0].upper  # not a line in capitals, and not split into sentences


def test_a_lone_space_piece_leaves_no_space_at_the_ends_or_twice_in_a_row(translator):
    sp = translator.tgt_tokenizer
    space, dog, two = sp.piece_to_id("▁"), sp.encode("Hund"), sp.encode("Zwei")
    assert sp.id_to_piece(space) == "▁" and sp.decode(dog + [space] + two) == "Hund  Zwei"  # what it decodes to
    for tokens, text in ((dog + [space], "Hund"), ([space] + dog, "Hund"), (dog + [space] + two, "Hund Zwei")):
        assert hypothesis_text(sp, Hypothesis(tokens, 0.0, 0.0)) == text
    assert hypothesis_text(sp, Hypothesis(dog + [space], 0.0, 0.0, upper=True)) == "HUND"


def test_a_word_in_capitals_in_an_ordinary_sentence_is_lowered_where_the_vocabulary_spells_it_better():
    from nmt.decode.text.casing import capitalized_words, lowered, recapitalized

    pieces = {"orange": 1, "ORANGE": 4, "usa": 2, "USA": 1, "amc": 2, "AMC": 3, "TV": 2, "tv": 1}.__getitem__
    line = "A man in an ORANGE hat from the USA saw AMC on TV."
    spans = capitalized_words(line, pieces)
    assert [line[a:b] for a, b in spans] == ["ORANGE", "AMC"]  # USA: one piece in capitals; TV: two letters
    assert lowered(line, spans) == "A man in an orange hat from the USA saw amc on TV."
    assert capitalized_words("A MAN IN AN ORANGE HAT", pieces) == []  # a line in capitals: sentence case instead
    assert capitalized_words("The Orange Hat Of The Day", pieces) == []
    headline = "AN ORANGE HAT. A man saw AMC."  # a sentence in capitals is answered in capitals instead
    assert [headline[a:b] for a, b in capitalized_words(headline, pieces)] == ["AMC"]
    # written in capitals again where the output copied the word, in any case; a translated word stays
    assert recapitalized("Ein amc-Gebäude und Amc, nicht amcx.", ["AMC"]) == "Ein AMC-Gebäude und AMC, nicht amcx."
    assert recapitalized("ein orangefarbener Hut", ["ORANGE"]) == "ein orangefarbener Hut"


def test_an_emphasised_word_is_translated_as_in_lower_case(translator, trained_tiny, monkeypatch):
    from nmt.decode import translate as translating

    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    monkeypatch.setattr(translating, "source_pieces", lambda engine: {"black": 1, "BLACK": 3}.get)
    [[plain]], [[emphasised]] = (translate_lines(translator, ["A black dog leaps over a log."], cfg),
                                 translate_lines(translator, ["A BLACK dog leaps over a log."], cfg))
    assert emphasised.tokens == plain.tokens
    off = cfg.model_copy(update={"normalize_case": False})
    [[as_written]] = translate_lines(translator, ["A BLACK dog leaps over a log."], off)
    assert as_written.tokens != plain.tokens
