"""Markdown's inline marks (nmt.decode.text.markdown): read by hand-made lines, and carried
through translate_lines: the model reads the words alone, the marks come back around them."""

from __future__ import annotations

import pytest

from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.markdown import markdown_pieces
from nmt.decode.translate import translate_lines


@pytest.mark.parametrize("line, pieces", [
    ("A **black** dog.", [("text", "A "), ("open", "**", "md-strong"), ("text", "black"), ("close", "**", "md-strong"),
                          ("text", " dog.")]),
    ("A _black_ dog.", [("text", "A "), ("open", "_", "md-em"), ("text", "black"), ("close", "_", "md-em"),
                        ("text", " dog.")]),
    ("Run `make demo` now", [("text", "Run "), ("point", "`make demo`"), ("text", " now")]),
    ("See ![a dog](dog.png).", [("text", "See "), ("point", "![a dog](dog.png)"), ("text", ".")]),
    ("To [the park](https://x.org/p).", [("text", "To "), ("open", "[", "md-link"), ("text", "the park"),
                                         ("close", "](https://x.org/p)", "md-link"), ("text", ".")]),
    ("A **black *and* white** dog", [
        ("text", "A "), ("open", "**", "md-strong"), ("text", "black "), ("open", "*", "md-em"), ("text", "and"),
        ("close", "*", "md-em"), ("text", " white"), ("close", "**", "md-strong"), ("text", " dog")]),
    ("`a *b* c` and ~~d~~", [("point", "`a *b* c`"), ("text", " and "), ("open", "~~", "md-strike"),
                             ("text", "d"), ("close", "~~", "md-strike")]),
    # a documentation site's: links with a title, a reference, a shortcode for a URL; points copied as written
    ('A [park](https://x.org "The park").', [("text", "A "), ("open", "[", "md-link"), ("text", "park"),
                                             ("close", '](https://x.org "The park")', "md-link"), ("text", ".")]),
    ("Read [the guide][guide].", [("text", "Read "), ("open", "[", "md-link"), ("text", "the guide"),
                                  ("close", "][guide]", "md-link"), ("text", ".")]),
    ('See [it]({{< ref "a.md" >}}).', [("text", "See "), ("open", "[", "md-link"), ("text", "it"),
                                       ("close", ']({{< ref "a.md" >}})', "md-link"), ("text", ".")]),
    ("On [Wiki](https://w.org/A_(b)) now", [("text", "On "), ("open", "[", "md-link"), ("text", "Wiki"),
                                            ("close", "](https://w.org/A_(b))", "md-link"), ("text", " now")]),
    ("Hi {{ site.name }}, {% link a.md %} and {{% var %}}", [
        ("text", "Hi "), ("point", "{{ site.name }}"), ("text", ", "), ("point", "{% link a.md %}"), ("text", " and "),
        ("point", "{{% var %}}")]),
    ("A note[^1] :tada: on $x^2$, not $5 or $5 and $6.", [
        ("text", "A note"), ("point", "[^1]"), ("text", " "), ("point", ":tada:"), ("text", " on "), ("point", "$x^2$"),
        ("text", ", not $5 or $5 and $6.")]),
    ("![logo][logo] at 10:30:00", [("point", "![logo][logo]"), ("text", " at 10:30:00")]),
    ("A [link][id]<!-- ignore --> here", [("text", "A "), ("open", "[", "md-link"), ("text", "link"),
                                         ("close", "][id]", "md-link"), ("point", "<!-- ignore -->"), ("text", " here")]),
    # reStructuredText's: a role, a literal ending in a backtick, links by name and URL, substitutions, footnotes
    ("See :ref:`install` or ``:func:`open``` and `Py <https://python.org>`_, Py_, |version| [#]_.", [
        ("text", "See "), ("point", ":ref:`install`"), ("text", " or "), ("point", "``:func:`open```"), ("text", " and "),
        ("point", "`Py <https://python.org>`_"), ("text", ", "), ("point", "Py_"), ("text", ", "), ("point", "|version|"),
        ("text", " "), ("point", "[#]_"), ("text", ".")]),
    # text, as CommonMark reads it: no mark around a space, none inside a word, none unclosed
    ("snake_case_name is 5 * 3 * 2 and 2*3*4", None), ("A ** b ** c", None), ("a *b", None), ("[x] to do", None),
    ("A dog runs.", None)])
def test_markdowns_marks_are_elements_and_points(line, pieces):
    assert markdown_pieces(line) == pieces


LINE = "A black dog leaps over a log."


def test_the_model_reads_the_words_and_the_marks_come_back_around_theirs(translator, cfg, monkeypatch):
    [[plain]] = translate_lines(translator, [LINE], cfg)
    text = hypothesis_text(translator.tgt_tokenizer, plain)
    lines = ["A **black** dog leaps over a log.", "A black dog leaps over `a log`.", "A black dog [leaps](https://x.org) over a log."]
    strong, code, link = (h[0] for h in translate_lines(translator, lines, cfg))
    assert strong.tokens == plain.tokens and strong.text.count("**") == 2
    assert strong.text.replace("**", "") == text
    assert "`a log`" in code.text  # copied, never translated
    assert link.tokens == plain.tokens and "](https://x.org)" in link.text
    assert link.text.replace("](https://x.org)", "").replace("[", "") == text
    # the search is given the words alone; with markdown off, the marks too
    searched = []
    search = translator.translate_batch
    monkeypatch.setattr(translator, "translate_batch", lambda sources, *a, **k: searched.extend(sources) or search(sources, *a, **k))
    translate_lines(translator, lines[:1], cfg)
    translate_lines(translator, lines[:1], cfg.model_copy(update={"markdown": False}))
    assert searched[0] == translator.src_tokenizer.encode(LINE) != searched[1]
