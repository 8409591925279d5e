"""Programs' messages cut into what is translated and what is kept (nmt.decode.text.messages):
lines and ICU MessageFormat's plural and select, checked by hand; the parts always join into the
message again."""

from __future__ import annotations

import pytest

from nmt.decode.text.messages import message_parts


def _cut(text: str, joins: bool = True) -> list:
    parts = message_parts(text)
    assert ("".join(part.text for part in parts) == text) == joins
    return [(part.model_text,) if part.translated else part.text for part in parts]


def test_words_around_a_plural_go_into_its_branches_each_a_whole_sentence():
    assert _cut(" You have {count, plural, =0 {no messages} one {# message} other {# messages}}.", joins=False) == [
        " ", "{count, plural, =0 {", ("You have no messages.",), "} one {", ("You have {__n__} message.",),
        "} other {", ("You have {__n__} messages.",), "}}"]
    assert _cut("{name} has {g, select, f {her dog} other {their dog}}", joins=False) == [
        "{g, select, f {", ("{name} has her dog",), "} other {", ("{name} has their dog",), "}}"]
    # tags around it go into each branch too, where they nest
    assert _cut("<b>{n}</b> new {n, plural, one {message} other {messages}}", joins=False) == [
        "{n, plural, one {", ("<b>{n}</b> new message",), "} other {", ("<b>{n}</b> new messages",), "}}"]
    assert _cut("<b>You have {n, plural, one {# cat} other {# cats}}</b>", joins=False)[1] == ("<b>You have {__n__} cat</b>",)
    # not where the words around it hold "#", a file's inline code, tags that do not nest, or another plural:
    # each part apart instead
    assert _cut("Item #{n, plural, one {cat} other {cats}}") == [
        ("Item #",), "{n, plural, one {", ("cat",), "} other {", ("cats",), "}}"]
    assert _cut("<f1>A dog</f1> {n, plural, one {cat} other {cats}}")[0] == ("<f1>A dog</f1>",)
    assert _cut("</b>A dog {n, plural, one {cat} other {cats}}")[0] == ("</b>A dog",)


def test_each_branch_of_a_plural_or_select_is_translated_apart_its_syntax_kept():
    assert _cut("{gender, select, female {She sings #1} other {They sing}}") == [
        "{gender, select, female {", ("She sings #1",), "} other {", ("They sing",), "}}"]  # "#": the number in plurals only
    assert _cut("{n, plural, offset:1 =0 {nobody} other {{name} and # others}}") == [
        "{n, plural, offset:1 =0 {", ("nobody",), "} other {", ("{name} and {__n__} others",), "}}"]
    # nested: a select inside a plural's branch
    assert _cut("{n, plural, one {{g, select, f {her dog} other {their dog}}} other {# dogs}}") == [
        "{n, plural, one {", "{g, select, f {", ("her dog",), "} other {", ("their dog",), "}}", "} other {",
        ("{__n__} dogs",), "}}"]


def test_the_number_of_a_plural_branch_is_written_back_as_it_was():
    [part] = [p for p in message_parts("{n, plural, other {# files}}") if p.translated]
    assert part.written("{__n__} Dateien") == "# Dateien"


@pytest.mark.parametrize("text", ["broken {n, plural, one {x}", "{n, plural, one x}", "<f1>{n, plural, one {x} other {y}}</f1>"])
def test_syntax_that_does_not_parse_or_lies_inside_an_element_leaves_the_message_whole(text):
    assert _cut(text) == [(text,)]


def test_lines_are_translated_apart_their_breaks_and_edge_spaces_kept():
    assert _cut("Usage: run\n  A <f1>big\ndog</f1>.\n\n...") == [
        ("Usage: run",), "\n", "  ", ("A <f1>big\ndog</f1>.",), "\n", "\n", "..."]  # a break inside an element stays


@pytest.mark.parametrize("text, kept", [("%sK", True), ("OK", True), ("%1$s GB", True), ("<f1>M</f1>", True), ("k", True),
                                        ("No", False), ("USB drive", False), ("A dog", False), ("BEST", False),
                                        ("%lld", True), ("+2", True), ("0.00 %@", True), ("<f1>%d</f1>%%", True),
                                        ("%Y-%m-%d", True), ("%B %d, %Y", True), ("%H:%M", True), ("%d dogs", False)])
def test_a_letter_or_two_capitals_alone_and_no_letter_at_all_are_kept_as_written(text, kept):
    """A model makes a word of a letter alone ("%sK": "%s Ein Kind"), and a message without a word
    needs no translation: a String Catalog gives it no localization."""
    assert [part.translated for part in message_parts(text)] == [not kept]


def test_a_branchs_translation_quotes_what_icu_would_read_as_syntax():
    """A stray brace would end the branch, and an apostrophe before a brace or "#" would start a
    quoted stretch: both are quoted as ICU writes them; placeholders stay."""
    branch = [part for part in message_parts("{n, plural, one {# dog} other {# dogs}}") if part.translated][1]
    assert branch.written("{__n__} Hunde}") == "# Hunde'}'"
    assert branch.written("Nr. # {__n__}") == "Nr. '#' #"  # (a "#" of the translation's own is not the number)
    assert branch.written("l'{__n__} chiens { x") == "l''# chiens '{' x"
    assert branch.written("{name}'s {__n__} dogs, don't") == "{name}'s # dogs, don't"
    # what ICU quotes is the text itself: the model is given it unquoted, and it is quoted again
    parts = [part for part in message_parts("{n, plural, one {Nr. '#': # dog} other {l''# dogs '}'}}") if part.translated]
    assert [part.model_text for part in parts] == ["Nr. #: {__n__} dog", "l'{__n__} dogs }"]
    assert [part.written(part.model_text) for part in parts] == ["Nr. '#': # dog", "l''# dogs '}'"]
    outside = message_parts("A {b} dog}")[0]  # (not in a branch: braces are the text's own)
    assert outside.written("Ein {b} Hund}") == "Ein {b} Hund}"
