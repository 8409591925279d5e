"""Quotation marks (nmt.decode.text.quotes): which marks make a quote, by hand-made cases, and
through translate_lines: the model reads the sentence without them, and they come back around
output words, as the target language writes quotes (or as written)."""

from __future__ import annotations

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.markup import mark, render, walk
from nmt.decode.text.quotes import QUOTE, in_target_marks, quote_spans
from nmt.decode.translate import translate_lines


def quotes(text: str) -> list[str]:
    return [text[start:end] for start, end in quote_spans(text)]


def test_a_quote_is_a_pair_of_double_marks_of_one_style_around_a_letter():
    assert quotes('A man in a "red shirt" walks, "fast".') == ['"red shirt"', '"fast"']
    assert quotes("“A dog runs.” „Ein Hund“ «un chien» »ein Hund«") == [
        "“A dog runs.”", "„Ein Hund“", "«un chien»", "»ein Hund«"]
    assert quotes('("a dog") [„ein Hund”]') == ['"a dog"', "„ein Hund”"]
    # single marks, which are apostrophes too: an apostrophe between letters inside a quote is one
    assert quotes("He said 'I don't know' and ‘it’s late’, ‚gut‘, Rock 'n' roll.") == [
        "'I don't know'", "‘it’s late’", "‚gut‘", "'n'"]
    # inches, marks inside a word, numbers alone, unpaired or mixed marks, apostrophes: left to the model
    for text in ('5" long nails', 'a"b" c', '"42"', '"a dog', "“a dog»", "“a\ndog”", "It's Tom's dog.",
                 "the dogs' toys", "the '60s", "'a dog", "‘a dog'"):
        assert quotes(text) == [], text
    # a mark after an "s" before a word in lower case is a plural's possessive where the quote closes later
    assert quotes("He said 'the dogs' toys are red' today.") == ["'the dogs' toys are red'"]
    assert quotes("'I like the dogs' she said.") == ["'I like the dogs'"]  # no later closing mark: it closes
    assert quotes("'Cats' and 'dogs' are pets.") == ["'Cats'", "'dogs'"]


def test_the_marks_are_an_element_around_the_words_and_come_back_as_written():
    marked = mark('A man in a "red shirt" walks.', markup=False, verbatim=True, quotes=True)
    assert marked.text == "A man in a red shirt walks."
    [element] = marked.items
    assert (element.open, element.close, element.name, element.point) == ('"', '"', QUOTE, False)
    assert marked.text[element.start:element.end] == "red shirt"
    assert render(marked, "Ein Mann in einem roten Hemd geht.", "0-0 1-1 2-2 3-3 4-4 5-5 6-6") == \
        'Ein Mann in einem "roten Hemd" geht.'
    whole = mark("“A dog runs.”", markup=False, verbatim=True, quotes=True)
    assert whole.text == "A dog runs." and render(whole, "Ein Hund rennt.", "0-0 1-1 2-2") == "“Ein Hund rennt.”"
    # a quote that holds just a verbatim span goes with it, whole; the rule off: nothing taken out
    assert [i.open for i in walk(mark('See "https://x.org" now.', False, True, quotes=True).items)] == ['"https://x.org"']
    assert mark('A "red shirt".', markup=False, verbatim=True).items == []
    escaped = mark("A &quot;red shirt&quot; &amp; a hat.", markup=True, verbatim=True, quotes=True)
    assert escaped.text == "A red shirt & a hat." and [i.open for i in escaped.items] == ["&quot;"]
    assert render(escaped, "Ein rotes Hemd & ein Hut.", "0-0 1-1 2-2 3-3 4-4 5-5") == \
        "Ein &quot;rotes Hemd&quot; &amp; ein Hut."


def test_the_marks_are_written_as_the_target_language_writes_quotes_a_quote_in_a_quote_in_its_second_marks():
    def written(line: str, lang: str | None, markup: bool = False) -> list[tuple[str, str]]:
        marked = mark(line, markup=markup, verbatim=True, quotes=True)
        in_target_marks(marked.items, lang)
        return [(i.open, i.close) for i in walk(marked.items)]

    nested = 'He said "a \'big\' dog" and “fine”.'
    assert written(nested, "de") == [("„", "“"), ("‚", "‘"), ("„", "“")]
    assert written("'A dog.' ‘A cat.’", "de") == [("„", "“"), ("„", "“")]  # by depth, not by the marks' shape
    assert written(nested, "fr") == [("«\u00a0", "\u00a0»"), ("“", "”"), ("«\u00a0", "\u00a0»")]
    assert written("„Ein Hund“ und ‚eine Katze‘", "en") == [("“", "”"), ("“", "”")]
    assert written(nested, "en") == [('"', '"'), ("'", "'"), ("“", "”")]  # straight marks stay straight in English
    assert written(nested, "ja") == [("「", "」"), ("『", "』"), ("「", "」")]
    assert written(nested, "es") == written(nested, None) == [('"', '"'), ("'", "'"), ("“", "”")]  # as written
    assert written("A &quot;red&quot; car.", "de", markup=True) == [("„", "“")]
    marked = mark("“A dog runs.”", markup=False, verbatim=True, quotes=True)
    in_target_marks(marked.items, "pl")
    assert render(marked, "Pies biegnie.", "0-0 1-1 2-2") == "„Pies biegnie.”"


def test_a_quote_around_tags_is_an_element_around_them_where_they_nest():
    """Marks on either side of tags ('"A <b>dog</b> runs."') make an element around the tags, where
    the tags between them are balanced; crossed with an element, the marks are left in the text."""
    def items(line: str) -> list[tuple[str, str]]:
        return [(i.open, i.close) for i in walk(mark(line, markup=True, verbatim=True, quotes=True).items)]

    assert items('"A <b>dog</b> runs."') == [('"', '"'), ("<b>", "</b>")]
    assert items('<p>“Visit our <a href="/shop">shop</a> today.”</p>') == [
        ("<p>", "</p>"), ("“", "”"), ('<a href="/shop">', "</a>")]
    assert items('A "<i>black</i> dog" runs.') == [('"', '"'), ("<i>", "</i>")]
    crossed = mark('"A <b>dog" runs</b>.', markup=True, verbatim=True, quotes=True)
    assert crossed.text == '"A dog" runs.' and [i.open for i in walk(crossed.items)] == ["<b>"]
    marked = mark('"A <b>dog</b> runs."', markup=True, verbatim=True, quotes=True)
    assert render(marked, "Ein Hund rennt.", "0-0 1-1 2-2") == '"Ein <b>Hund</b> rennt."'


def test_a_quoted_line_is_translated_as_the_line_without_its_marks(translator, cfg, searched):
    line = "A black dog leaps over a log."
    [[plain]] = translate_lines(translator, [line], cfg)
    searched.clear()
    out = translate_lines(translator, [f"“{line}”", 'A black dog "leaps over" a log.'], cfg)
    assert searched == [line, line]  # the model never sees the marks
    whole, phrase = (hypothesis_text(translator.tgt_tokenizer, hyps[0]) for hyps in out)
    assert whole == f"„{hypothesis_text(translator.tgt_tokenizer, plain)}“"  # German's marks
    assert phrase.count("„") == phrase.count("“") == 1 and " ".join(phrase.replace("„", "").replace("“", "").split()) == \
        hypothesis_text(translator.tgt_tokenizer, plain)
    [[as_written]] = translate_lines(translator, [f"“{line}”"], cfg.model_copy(update={"quote_marks": "source"}))
    assert hypothesis_text(translator.tgt_tokenizer, as_written) == f"“{hypothesis_text(translator.tgt_tokenizer, plain)}”"
    off = cfg.model_copy(update={"quotes": False})
    searched.clear()
    translate_lines(translator, [f"“{line}”"], off)
    assert searched == [f" ⁇ {line} ⁇ "]  # off: the model reads the marks (unknown pieces to the tiny vocabulary)  # (off: the marks are the model's to read)
