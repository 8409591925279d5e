"""Asides in parentheses (nmt.decode.text.asides): which parentheses hold one, by hand-made cases,
and through translate_lines: a phrase's output is its sentence's translation with parentheses
around some of its words, a longer aside's its sentence's translation with the aside's own
translation put back in parentheses."""

from __future__ import annotations

from nmt.decode.text.asides import ASIDE, aside_spans, aside_text, written_aside
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.markup import mark, walk
from nmt.decode.translate import translate_lines


def asides(text: str) -> list[str]:
    return [text[start:end] for start, end in aside_spans(text)]


def test_an_aside_is_two_letters_or_more_in_parentheses_that_stand_apart():
    assert asides("Two men (one in a hat) walk down the street.") == ["(one in a hat)"]
    assert asides("A man is climbing a wall (see photo).") == ["(see photo)"]
    assert asides("(Photo by J. Smith) A dog runs, (it is fast), and (very happy)!") == [
        "(Photo by J. Smith)", "(it is fast)", "(very happy)"]
    assert asides("A man (age 30) runs :) and (in the snow).") == ["(age 30)", "(in the snow)"]
    assert asides("Two women (sisters?) walk, the (WHO) says.") == ["(sisters?)", "(WHO)"]
    # one letter, numbers alone, a plural or a function, brackets inside, nested parentheses: left in place
    for text in ("The dog(s) run.", "Compute f(x y) now.", "Born (2019) here.", "A (5 m) wall.",
                 "Won (3 - 1) here.", "(a) first", "A (b [c] d) e.", "A (b (c d) e) f.", "A (b c"):
        assert asides(text) == [], text
    assert asides("(see the photo)") == []  # all aside: translated as the line it is


def test_a_phrase_is_an_element_around_its_words_and_a_longer_aside_a_point():
    marked = mark("Two men (one in a hat) walk down the street.", markup=False, verbatim=True, asides=True)
    assert marked.text == "Two men one in a hat walk down the street."
    [element] = marked.items
    assert not element.point and element.name == ASIDE and (element.open, element.close) == ("(", ")")
    assert marked.text[element.start:element.end] == "one in a hat"
    marked = mark("A dog runs (it is very fast and the cat is slow) today.", markup=False, verbatim=True, asides=True)
    assert marked.text == "A dog runs today."
    [point] = marked.items
    assert point.point and point.name == ASIDE and point.open == "(it is very fast and the cat is slow)"
    assert marked.text[:point.start] == "A dog runs "
    # one word is translated apart too: in its sentence, it is a word the sentence lacks
    marked = mark("Two women (sisters?) walk.", markup=False, verbatim=True, asides=True)
    assert marked.text == "Two women walk." and [i.open for i in marked.items] == ["(sisters?)"]
    # verbatim spans inside a phrase are its children; inside a longer aside they go with it
    marked = mark("A dog (born in 2019) runs (as every dog born in 2019 does) at 10:30.", markup=False,
                  verbatim=True, asides=True)
    assert [(item.open, item.point) for item in walk(marked.items)] == [
        ("(", False), ("2019", True), ("(as every dog born in 2019 does)", True), ("10:30", True)]
    assert mark("Two men (one in a hat) walk.", markup=False, verbatim=True).items == []  # asides off
    markup = mark("A <b>man</b> (Tom &amp; Jerry and their friends the cats) runs.", markup=True, verbatim=False,
                  asides=True)
    [aside] = [item for item in walk(markup.items) if item.name == ASIDE]
    assert aside_text(aside.open, markup=True) == "Tom & Jerry and their friends the cats"
    assert written_aside("Tom & Jerry", "Tom & Jerry.", markup=True) == "(Tom &amp; Jerry)"
    assert written_aside("one in a hat", "einer mit Hut.", markup=False) == "(einer mit Hut)"
    assert written_aside("It runs.", "Er rennt.", markup=False) == "(Er rennt.)"
    assert written_aside("and so on", "und so weiter...", markup=False) == "(und so weiter...)"


def text_of(translator, hyps) -> str:
    return hypothesis_text(translator.tgt_tokenizer, hyps[0])


def test_a_phrase_is_translated_in_its_sentence_with_parentheses_around_its_words(translator, cfg, searched):
    [[hyp]] = translate_lines(translator, ["A black dog leaps (over a log)."], cfg)
    assert searched == ["A black dog leaps over a log."]
    [[plain]] = translate_lines(translator, ["A black dog leaps over a log."], cfg)
    output = text_of(translator, [hyp])
    assert output.count("(") == output.count(")") == 1 and output.index("(") < output.index(")")
    assert " ".join(output.replace("(", " ").replace(")", " ").split()).replace(" .", ".") == text_of(translator, [plain])


def test_a_longer_aside_is_translated_apart_and_put_back_between_its_neighbours(translator, cfg, searched):
    aside = "two cats sit on a wall"
    line = f"A black dog ({aside}) leaps over a log."
    [with_aside] = translate_lines(translator, [line], cfg)
    assert sorted(searched) == sorted(["A black dog leaps over a log.", aside])
    sentence, alone = (text_of(translator, hyps) for hyps in translate_lines(
        translator, ["A black dog leaps over a log.", aside], cfg))
    output = text_of(translator, with_aside)
    written = written_aside(aside, alone, markup=False)
    assert written in output and output.replace(written, " ").split() == sentence.split()
    assert output.count("(") == output.count(")") == 1
    # off, the model reads the line as it is
    searched.clear()
    translate_lines(translator, [line], cfg.model_copy(update={"parentheses": False}))
    [read] = searched  # (as the tiny vocabulary spells it: it has no parentheses)
    assert read.startswith("A black dog ") and aside in read and read.endswith(" leaps over a log.")


def test_an_asides_warnings_name_its_own_line(translator, cfg):
    long_aside = " ".join(["two cats sit on a wall"] * 30)  # more tokens than the model's positions
    warnings: list[str] = []
    from nmt.decode.request import Line
    from nmt.decode.translate import translate

    lines = ["A dog runs.", "A cat sits.", f"A black dog ({long_aside}) leaps over a log."]
    [_, _, [hyp]] = translate(translator, [Line(text) for text in lines], cfg, warnings.append, first_line=5)
    assert warnings and all(w.startswith("line 7:") for w in warnings), warnings
    assert hypothesis_text(translator.tgt_tokenizer, hyp).count("(") == 1
