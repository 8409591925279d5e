"""AsciiDoc documents (nmt.decode.asciidoc_document): a page's texts read by hand, its syntax
written back as an AsciiDoc processor reads it (the translated page converted by asciidoc-py into
the same elements, ids included, as the source), section ids made as Asciidoctor makes them, and
`nmt translate` of an .adoc file with the tiny model."""

from __future__ import annotations

import io
import re
from collections import Counter

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.asciidoc_document import AsciidocDocument, _Context
from nmt.decode.stream import file_format
from nmt.decode.text.markdown import markdown_pieces

PAGE = """= Getting Started
Jane Doe <jane@example.com>
:toc:
:toc-title: Contents
:imagesdir: images

// A comment.

A dog runs on the beach. A man is riding a bicycle
down the street. See <<_install_it>> and <<feeding,the feeding guide>>.

== Install it

NOTE: A child plays in the park.

Read the https://asciidoctor.org[documentation] first. +
Then a new line.

.A listing
[source,python]
----
print("A dog")
----

* A girl reads a book.
** A boy jumps into
the water.

. The first step.

CPU:: The brain of
the computer.

[[feeding]]
=== Feeding the dog

[NOTE]
====
A woman sings on a stage.
====

[cols="1,2,1m"]
|===
|Name |Description |Code

|dog
|A dog runs in the park.
|run()
|===

image::dog.png[A black dog, 300]

[verse]
____
The fog comes
on little cat feet.
____

  An indented literal line.

ifdef::env-github[]
A paragraph for GitHub.
endif::[]

Getting Help
------------

Ask a question.
"""
TEXTS = ["Getting Started", "Contents",
         "A dog runs on the beach. A man is riding a bicycle down the street. See <<_install_it>> and "
         "<<feeding,the feeding guide>>.", "Install it", "A child plays in the park.",
         "Read the https://asciidoctor.org[documentation] first.", "Then a new line.", "A listing", "A girl reads a book.",
         "A boy jumps into the water.", "The first step.", "CPU", "The brain of the computer.", "Feeding the dog",
         "A woman sings on a stage.", "Name", "Description", "dog", "A dog runs in the park.", "A black dog",
         "The fog comes", "on little cat feet.", "A paragraph for GitHub.", "Getting Help", "Ask a question."]


def test_a_pages_words_are_its_texts_and_its_syntax_is_kept():
    document = AsciidocDocument.read(PAGE.splitlines())
    assert document.texts == TEXTS
    assert document.numbers == [1, 4, 9, 12, 14, 16, 17, 19, 25, 26, 29, 31, 31, 35, 39, 44, 44, 46, 47, 51, 55, 56, 62,
                                65, 68]
    out = document.write(["Erste Schritte", "Inhalt", "Ein Hund rennt am Strand. Siehe <<_install_it>> und "
                          "<<feeding,die Anleitung zum Füttern>>.", "Installieren", "Ein Kind spielt im Park.",
                          "Lies zuerst die https://asciidoctor.org[Dokumentation].", "Dann eine neue Zeile.",
                          "Ein Listing", "Ein Mädchen liest.", "Ein Junge springt ins Wasser.", "Der erste Schritt.",
                          "Prozessor", "Das Gehirn des Computers.", "Den Hund füttern", "Eine Frau singt.", "Name",
                          "Beschreibung", "Hund", "Ein Hund rennt im Park.", "Ein schwarzer Hund", "Der Nebel kommt",
                          "auf kleinen Katzenpfoten.", "Ein Absatz für GitHub.", "Hilfe bekommen", "Frag."])
    text = "\n".join(out)
    assert out[:5] == ["= Erste Schritte", "Jane Doe <jane@example.com>", ":toc:", ":toc-title: Inhalt", ":imagesdir: images"]
    # the section's id, which a link points at, written above its translated title; an explicit one kept as it was
    assert "[[_install_it]]\n== Installieren\n" in text and "[[feeding]]\n=== Den Hund füttern\n" in text
    assert "[[_getting_help]]\nHilfe bekommen\n--------------\n" in text  # the underline as long as the title
    assert "NOTE: Ein Kind spielt im Park.\n" in text and "\nLies zuerst die https://asciidoctor.org[Dokumentation]. +\n" in text
    assert '.Ein Listing\n[source,python]\n----\nprint("A dog")\n----\n' in text
    assert "* Ein Mädchen liest.\n** Ein Junge springt\nins Wasser.\n" in text and "\n. Der erste Schritt.\n" in text
    assert "Prozessor:: Das Gehirn\ndes Computers.\n" in text
    assert "|Name |Beschreibung |Code\n\n|Hund\n|Ein Hund rennt im Park.\n|run()\n" in text
    assert "image::dog.png[Ein schwarzer Hund, 300]" in out and "  An indented literal line." in out
    assert "ifdef::env-github[]\nEin Absatz für GitHub.\nendif::[]\n" in text


def _converted(text: str, folder) -> tuple[str, list]:
    """The page converted to HTML by asciidoc-py (from `folder`, where its includes are), and its
    warnings."""
    api_module = pytest.importorskip("asciidoc.api")
    api = api_module.AsciiDocAPI()
    api.options("--no-header-footer")
    api.attributes["source-highlighter"] = "none"
    out = io.StringIO()
    page = folder / "page.adoc"
    page.write_text(text, encoding="utf-8")
    api.execute(str(page), out, backend="html5")
    return out.getvalue(), api.messages


def _elements(html: str) -> list[str]:
    """Each element's tag in order, with its id where it has one."""
    return [tag + id_ for tag, id_ in re.findall(r"<(/?[a-z0-9]+)(?:[^>]*?( id=\"[^\"]*\"))?", html)]


def test_asciidoc_reads_the_translated_page_as_it_reads_the_source(tmp_path):
    """Every element of the source, in order and with its id, where every text is translated
    longer; and the same page back where each text is its own translation."""
    document = AsciidocDocument.read(PAGE.splitlines())
    source, warnings = _converted(PAGE, tmp_path)
    translated, translated_warnings = _converted(
        "\n".join(document.write([f"{text}, übersetzt und länger geworden" for text in document.texts])) + "\n", tmp_path)
    assert _elements(translated) == _elements(source) and 'id="_install_it"' in source
    assert warnings == translated_warnings == []
    same, _ = _converted("\n".join(document.write(document.texts)) + "\n", tmp_path)
    assert " ".join(same.split()) == " ".join(source.split())


@pytest.mark.parametrize("title, attributes, expected", [
    ("Getting Started", {}, "_getting_started"),
    ("What's *new* in 2.0?", {}, "_whats_new_in_2_0"),
    ("Install & Configure -- the `nmt` CLI", {}, "_install_configure_the_nmt_cli"),
    ("Getting Started", {"idprefix": "", "idseparator": "-"}, "getting-started"),
    ("About {product}", {"product": "Dog Walker"}, "_about_dog_walker"),
    ("Getting Started", {"sectids!": ""}, None),
])
def test_a_section_id_is_made_as_asciidoctor_makes_it(title, attributes, expected):
    """Asciidoctor's rule (Section.generate_id): the title's words lower-cased, characters other
    than words, spaces, hyphens and dots left out, and each run of those made one separator,
    after the prefix; worked out by hand."""
    assert _Context(dict(attributes)).section_id(title) == expected


def test_a_title_keeps_its_id_only_where_the_translation_would_make_another():
    page = ["= A Page", ":idprefix:", ":idseparator: -", "", "== Usage", "", "Text.", "", "== Usage", "", "[#setup]",
            "== Setup", "", "== 2.0"]
    document = AsciidocDocument.read(page)
    assert document.texts == ["A Page", "Usage", "Text.", "Usage", "Setup"]  # (a title without words: copied)
    out = document.write(["Eine Seite", "Verwendung", "Text.", "Usage", "Einrichtung"])
    # the second "Usage" made usage-2, as it does again after the first's anchor [[usage]]
    assert out == ["= Eine Seite", ":idprefix:", ":idseparator: -", "", "[[usage]]", "== Verwendung", "", "Text.", "",
                   "== Usage", "", "[#setup]", "== Einrichtung", "", "== 2.0"]
    twice = AsciidocDocument.read(["== Details", "", "== Details"])  # a changelog's: its second _details_2
    assert twice.write(["Details", "Einzelheiten"]) == ["== Details", "", "[[_details_2]]", "== Einzelheiten"]
    assert twice.write(["Einzelheiten", "Details"]) == ["[[_details]]", "== Einzelheiten", "", "== Details"]
    same = AsciidocDocument.read(["== Usage", "", "== Setup"])
    assert same.write(["Usage", "Einrichtung"]) == ["== Usage", "", "[[_setup]]", "== Einrichtung"]
    unknown = AsciidocDocument.read(["== About {product}"])  # its id depends on a value set elsewhere: not known
    assert unknown.write(["Über {product}"]) == ["== Über {product}"]
    off = AsciidocDocument.read([":sectids!:", "", "== Usage"])
    assert off.write(["Verwendung"]) == [":sectids!:", "", "== Verwendung"]


def test_an_asciidoc_cell_over_several_lines_is_read_as_a_page(tmp_path):
    """An `a|` cell's paragraphs, list and listing as a page's: its words translated, its code
    copied, and asciidoc-py converts the table into the source's elements."""
    table = ['[cols="1,2a"]', "|===", "|Name |Description", "", "|dog", "a|A dog runs in", "the park.", "",
             "* A list item.", "", "[source]", "----", "print('A dog')", "----", "", "|cat a|A cat sleeps.", "|==="]
    document = AsciidocDocument.read(table)
    assert document.texts == ["Name", "Description", "dog", "A dog runs in the park.", "A list item.", "cat", "A cat sleeps."]
    assert document.numbers == [3, 3, 5, 6, 9, 16, 16]
    out = document.write(["Name", "Beschreibung", "Hund", "Ein Hund rennt im Park.", "Ein Eintrag.", "Katze", "Eine Katze schläft."])
    assert out[4] == "|Hund" and " ".join(out[5:7]) == "a|Ein Hund rennt im Park." and out[7:9] == ["", "* Ein Eintrag."]
    assert out[10:14] == ["[source]", "----", "print('A dog')", "----"] and out[-2:] == ["|Katze a|Eine Katze schläft.", "|==="]
    source, _ = _converted("\n".join(table) + "\n", tmp_path)
    translated, warnings = _converted("\n".join(out) + "\n", tmp_path)
    assert _elements(translated) == _elements(source) and warnings == []


def test_a_line_break_at_a_paragraphs_end_stays_out_of_its_text():
    """" +" on a paragraph's last line (before a list continuation) is a break, not a word."""
    document = AsciidocDocument.read(["CPU::", "The brain of the computer. +", "+", "_More below._"])
    assert document.texts == ["CPU", "The brain of the computer.", "_More below._"]
    assert document.write(["Prozessor", "Das Gehirn.", "_Mehr unten._"])[1:3] == ["Das Gehirn. +", "+"]


def test_a_term_that_is_code_is_copied():
    document = AsciidocDocument.read(["`--verbose`:: Prints more.", ":id:: An id.", "spring.aop.ignore:: Ignores.",
                                      "Default value:: None."])
    assert document.texts == ["Prints more.", "An id.", "Ignores.", "Default value", "None."]


def test_a_cross_reference_by_title_is_made_one_by_id():
    """`<<Install it>>` finds its section by the title, which the translation changes: it is
    written by the section's id, which stays (above the title where need be), so that it still
    finds it and shows the translated title; a reference by id is left as it is."""
    page = ["== Install it", "", "[[setup]]", "== Set up", "", "See <<Install it>>, <<Set up,the set-up>> and <<setup>>."]
    document = AsciidocDocument.read(page)
    out = document.write(["Installieren", "Einrichten", "Siehe <<Install it>>, <<Set up,die Einrichtung>> und <<setup>>."])
    assert out == ["[[_install_it]]", "== Installieren", "", "[[setup]]", "== Einrichten", "",
                   "Siehe <<_install_it>>, <<setup,die Einrichtung>> und <<setup>>."]


def test_a_translation_is_never_wrapped_into_a_line_that_starts_a_block():
    """Written back over its three lines, no line of the paragraph starts as a list's item, a
    comment, an attribute line, an admonition or a continuation would in AsciiDoc."""
    document = AsciidocDocument.read(["One two three", "four five six", "seven eight nine."])
    translation = "Eins . zwei // drei [vier] fünf NOTE: sechs + sieben <1> acht :name: neun a. zehn elf zwölf."
    out = document.write([translation])
    assert " ".join(out) == translation and len(out) == 3
    assert not [line for line in out[1:] if re.match(r"\.\s|//|\[|NOTE:|\+\s|<1>|:name:|a\.\s", line)]


def test_asciidocs_inline_syntax_is_carried_as_marks_and_points():
    pieces = markdown_pieces("See https://a.org[the site], <<install,the guide>>, <<install>>, kbd:[Ctrl+C], "
                             "{version}, H~2~O, #marked#, footnote:[A note.] and link:a.html[x,window=_blank].")
    opened = [piece[1] for piece in pieces if piece[0] == "open"]
    points = [piece[1] for piece in pieces if piece[0] == "point"]
    assert opened == ["https://a.org[", "<<install,", "#", "footnote:["]
    assert points == ["<<install>>", "kbd:[Ctrl+C]", "{version}", "~2~", "link:a.html[x,window=_blank]"]
    closing = [piece[1] for piece in markdown_pieces("Read link:a.html[the guide^] now.") if piece[0] == "close"]
    assert closing == ["^]"]  # (a new window's caret is the link's, not its words')
    assert markdown_pieces("C++ and C# and issue #12 and 1 + 2 cost $5.") is None  # no mark where there is none


def test_translate_writes_an_adoc_file_as_asciidoc_reads_its_source(trained_tiny, tmp_path):
    """The tiny model's page: every element the source has, code as it was, and no warning."""
    assert file_format("docs/modules/ROOT/pages/index.adoc") == file_format("README.asciidoc") == "asciidoc"
    source = tmp_path / "index.adoc"
    source.write_text(PAGE, encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(source), "-o", str(tmp_path / "index.de.adoc")])
    assert result.exit_code == 0, result.output
    written = (tmp_path / "index.de.adoc").read_text(encoding="utf-8")
    assert '[source,python]\n----\nprint("A dog")\n----\n' in written and "\n  An indented literal line.\n" in written
    folder = tmp_path / "converted"
    folder.mkdir()
    translated, warnings = _converted(written, folder)
    source_html, _ = _converted(PAGE, folder)
    assert warnings == []
    assert Counter(_elements(translated)) == Counter(_elements(source_html))
