"""XLIFF files and gettext catalogs (nmt.decode.xliff_document, po_document): the segments left to
translate read by hand, each written back as the source's own markup would be (inline codes,
escapes, placeholders), everything else kept, and `nmt translate` of each with the tiny model."""

from __future__ import annotations

import codecs
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.stream import file_format
from tests.conftest import one_line_error, optional_module
from tests.decode.conftest import translated_both_ways

etree, needs_lxml = optional_module("lxml.etree")
polib, needs_polib = optional_module("polib")

XLIFF_1 = """<?xml version="1.0" encoding="UTF-8"?>
<!-- exported by a CAT tool -->
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="en" datatype="html" original="page.html">
    <body>
      <trans-unit id="1">
        <source>A man in a <g id="1" ctype="bold">red <g id="2">and</g> blue</g> shirt &amp; a hat.</source>
      </trans-unit>
      <trans-unit id="2">
        <source>A dog runs<x id="3" ctype="lb"/> on {0} &lt;grass&gt;.</source>
        <target> </target>
        <note>the lawn</note>
      </trans-unit>
      <trans-unit id="3">
        <source>Done</source>
        <target state="translated">Fertig</target>
      </trans-unit>
      <group translate="no">
        <trans-unit id="4"><source>Brand name</source></trans-unit>
      </group>
      <trans-unit id="5">
        <source>Two dogs play. A girl <bpt id="4">&lt;i&gt;</bpt>sings<ept id="4">&lt;/i&gt;</ept>.</source>
        <seg-source><mrk mtype="seg" mid="1">Two dogs play.</mrk> <mrk mtype="seg" mid="2">A girl <bpt id="4">&lt;i&gt;</bpt>sings<ept id="4">&lt;/i&gt;</ept>.</mrk></seg-source>
      </trans-unit>
    </body>
  </file>
</xliff>
"""

XLIFF_2 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="fr">
  <file id="f1">
    <unit id="1">
      <segment>
        <source>A man in a <pc id="1">red</pc> shirt<ph id="2"/>.</source>
      </segment>
      <ignorable><source> </source></ignorable>
      <segment state="initial">
        <source>Two <mrk id="m1" translate="no">Acme</mrk> dogs play.</source>
        <target></target>
      </segment>
    </unit>
    <unit id="2" translate="no"><segment><source>Brand</source></segment></unit>
    <unit id="3"><segment state="final"><source>Done</source><target>Fertig</target></segment></unit>
  </file>
</xliff>
"""


def _xliff(data: str | bytes):
    from nmt.decode.xliff_document import XliffDocument

    return XliffDocument.read(data.encode() if isinstance(data, str) else data, "in.xlf")


def _inner(element) -> str:
    """An element's content as XML, its namespace declarations left out."""
    text = etree.tostring(element, encoding="unicode", with_tail=False)
    return text[text.index(">") + 1:text.rindex("<")].replace(' xmlns="urn:oasis:names:tc:xliff:document:1.2"', "")


@needs_lxml
def test_xliff_1_segments_left_to_translate_are_read_as_markup_and_written_back_in_place():
    document = _xliff(XLIFF_1)
    assert document.texts == [
        "A man in a <f1>red <f2>and</f2> blue</f1> shirt &amp; a hat.",
        "A dog runs<p1/> on {0} &lt;grass&gt;.",
        "Two dogs play.",
        "A girl <p1/>sings<p2/>.",
    ]
    assert document.numbers == [7, 10, 23, 23]
    # each text written back as it came: every target's content is its source's (or segment's)
    root = etree.fromstring(document.write(document.texts, "de"))
    ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
    units = {unit.get("id"): unit for unit in root.iterfind(".//x:trans-unit", ns)}
    for unit_id in ("1", "2"):
        source, target = units[unit_id].find("x:source", ns), units[unit_id].find("x:target", ns)
        assert _inner(target) == _inner(source)
        assert (target.get("state"), target.get("state-qualifier")) == ("needs-review-translation", "leveraged-mt")
    assert [child.tag.split("}")[1] for child in units["1"]] == ["source", "target"]  # the target after the source
    assert [child.tag.split("}")[1] for child in units["2"]] == ["source", "target", "note"]
    assert _inner(units["5"].find("x:target", ns)) == _inner(units["5"].find("x:seg-source", ns))
    assert units["3"].find("x:target", ns).text == "Fertig" and units["3"].find("x:target", ns).get("state") == "translated"
    assert units["4"].find("x:target", ns) is None
    assert root.find("x:file", ns).get("target-language") == "de"
    # a code with no space beside it in the source gets none in the translation
    translations = [*document.texts[:1], "Ein Hund rennt <p1/> im Gras.", *document.texts[2:]]
    root = etree.fromstring(_xliff(XLIFF_1).write(translations, "de"))
    assert _inner(root.find(".//x:trans-unit[@id='2']/x:target", ns)) == 'Ein Hund rennt<x id="3" ctype="lb"/> im Gras.'


@needs_lxml
def test_xliff_2_segments_left_to_translate_are_read_as_markup_and_written_back_in_place():
    document = _xliff(XLIFF_2)
    assert document.texts == ["A man in a <f1>red</f1> shirt<p2/>.", "Two <p1/> dogs play."]
    written = document.write(document.texts, "fr")
    assert not document.warnings
    root = etree.fromstring(written)
    ns = {"x": "urn:oasis:names:tc:xliff:document:2.0"}
    segments = root.findall(".//x:segment", ns)
    for segment in segments[:2]:
        source, target = segment.find("x:source", ns), segment.find("x:target", ns)
        assert etree.tostring(source, with_tail=False).replace(b"source", b"target") == etree.tostring(target, with_tail=False)
        assert (segment.get("state"), segment.get("subState")) == ("translated", "nmt:mt")
    assert segments[2].find("x:target", ns) is None and segments[3].get("state") == "final"
    document = _xliff(XLIFF_2)  # a code with no space beside it in the source gets none in the translation
    root = etree.fromstring(document.write(["Ein Mann in einem <f1>roten</f1> Hemd <p2/> .", document.texts[1]], "fr"))
    assert b'Hemd<ph id="2"/>.</target>' in etree.tostring(root.find(".//x:segment/x:target", ns))
    # a file whose every segment is done comes out as it went in, byte for byte
    assert _xliff(written).texts == [] and _xliff(written).write([], "fr") == written
    # a file for another target language: written, and warned about
    document = _xliff(XLIFF_2)
    document.write(document.texts, "de")
    assert document.warnings == ["its trgLang is fr (line 2), but the model translates into de "
                                 "(a multilingual model's --tgt-lang chooses another)"]


ANGULAR_TEMPLATE = """<?xml version="1.0" encoding="UTF-8" ?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="en-US" datatype="plaintext" original="ng2.template">
    <body>
      <trans-unit id="greeting" datatype="html">
        <source>Hello <x id="INTERPOLATION" equiv-text="{{ name }}"/>!</source>
      </trans-unit>
      <trans-unit id="title" datatype="html">
        <source>A dog runs</source>
      </trans-unit>
      <trans-unit id="added" datatype="html">
        <source>A new cat</source>
      </trans-unit>
    </body>
  </file>
</xliff>
"""


@needs_lxml
@pytest.mark.parametrize("version", [1, 2])
def test_an_xliff_files_earlier_translation_is_kept_by_unit_where_its_source_has_not_changed(version):
    """--update for XLIFF (Angular's messages.xlf into messages.de.xlf): a unit whose source is as
    it was keeps its target and state; a changed source and a new unit are translated; a unit gone
    from the template is gone."""
    template = ANGULAR_TEMPLATE
    earlier = (template.replace('<file source-language="en-US"', '<file source-language="en-US" target-language="de"')
               .replace("!</source>", '!</source>\n        <target state="translated">Hallo <x id="INTERPOLATION" '
                                      'equiv-text="{{ name }}"/>! (geprüft)</target>')
               .replace("A dog runs</source>", 'A dog runs fast</source><target state="translated">Ein Hund rennt schnell</target>')
               .replace('<trans-unit id="added" datatype="html">\n        <source>A new cat</source>',
                        '<trans-unit id="gone"><source>Old</source><target>Alt</target>'))
    if version == 2:
        def as_2(text):
            return (text.replace('version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"',
                                 'version="2.0" xmlns="urn:oasis:names:tc:xliff:document:2.0" srcLang="en-US"'
                                 + (' trgLang="de"' if "target-language" in text else ""))
                    .replace(' source-language="en-US" target-language="de"', "").replace(' source-language="en-US"', "")
                    .replace(' datatype="plaintext" original="ng2.template"', ' id="ng2.template"').replace("<body>", "")
                    .replace("</body>", "").replace("trans-unit", "unit").replace(' datatype="html"', "")
                    .replace("<source>", "<segment><source>").replace("</source>\n      </unit>", "</source></segment>\n      </unit>")
                    .replace("</target>", "</target></segment>").replace(' state="translated"', "")
                    .replace('<x id="INTERPOLATION" equiv-text="{{ name }}"/>', '<ph id="1" equiv="{{ name }}"/>'))
        template, earlier = as_2(template), as_2(earlier)
    document = _xliff(template)
    assert document.version == version and _xliff(earlier).target_language == "de"
    assert document.keep_from(_xliff(earlier)) == 1 and len(document.messages) == 3
    assert document.texts == ["A dog runs", "A new cat"]
    written = document.write(document.with_kept(["Ein Hund rennt", "Eine neue Katze"]), "de").decode()
    assert "(geprüft)" in written and "Ein Hund rennt<" in written and "Eine neue Katze" in written
    assert "schnell" not in written and "Alt" not in written
    assert _xliff(written).texts == [] and _xliff(written).target_language == "de"
    if version == 1:  # the kept target as the translator left it; the new ones for review
        assert 'state="translated">Hallo' in written and written.count('state="needs-review-translation"') == 2


POT = """msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

#: app.c:1
msgid "A dog"
msgstr ""

#: app.c:2
msgid "A cat"
msgstr ""

#: app.c:3
msgid "one dog"
msgid_plural "%d dogs"
msgstr[0] ""
msgstr[1] ""
"""


@needs_polib
def test_a_templates_earlier_catalog_is_merged_as_msgmerge_merges_and_only_new_messages_translated():
    """--update for gettext (app.pot into de.po): the catalog keeps its header and the translations
    of the messages still in the template; one gone is made obsolete; the new ones are translated
    and marked fuzzy."""
    from nmt.decode.po_document import PoDocument

    earlier = ('msgid ""\nmsgstr ""\n"Language: de\\n"\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n'
               '"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
               'msgid "A dog"\nmsgstr "Ein Hund (geprüft)"\n\nmsgid "Old"\nmsgstr "Alt"\n')
    document = PoDocument.read(POT.encode(), "app.pot")
    assert document.keep_from(PoDocument.read(earlier.encode(), "de.po")) == 1 and document.message_count == 3
    assert document.texts == ["A cat", "one dog", "%d dogs"]
    written = polib.pofile(document.write(document.with_kept(["Eine Katze", "ein Hund", "%d Hunde"]), "de").decode())
    entries = {entry.msgid: entry for entry in written}
    assert entries["A dog"].msgstr == "Ein Hund (geprüft)" and "fuzzy" not in entries["A dog"].flags
    assert entries["A cat"].msgstr == "Eine Katze" and "fuzzy" in entries["A cat"].flags
    assert entries["one dog"].msgstr_plural == {0: "ein Hund", 1: "%d Hunde"}
    assert entries["Old"].obsolete and written.metadata["Language"] == "de"


@needs_polib
def test_a_catalog_with_nothing_left_to_translate_comes_back_as_it_was_written(trained_tiny, tmp_path):
    """A translator's catalog, every message translated, in lines longer than polib wraps: written
    back byte for byte (--update FOLDER then leaves it alone)."""
    long = "A dog runs over the grass, " * 4
    catalog = ('msgid ""\nmsgstr ""\n"Language: de\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
               f'#. {long}\nmsgid "{long}"\nmsgstr "{long}"\n')
    (tmp_path / "de.po").write_text(catalog, encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(tmp_path / "de.po"), "-o", str(tmp_path / "out.po")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.po").read_text(encoding="utf-8") == catalog


@needs_polib
def test_a_catalog_filled_in_place_changes_only_in_the_messages_translated(trained_tiny, tmp_path):
    """A catalog as msgmerge writes it (comments unwrapped, strings wrapped at gettext's width, not
    polib's): filled, only the translated message's lines and the fields set in the header
    (Language, the language's Plural-Forms) differ, so that a diff shows the translations alone."""
    import difflib

    long = "#. Translators: search terms to find this application. Do NOT translate or localize the semicolons!\n"
    catalog = ('msgid ""\nmsgstr ""\n"Project-Id-Version: dogs\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
               f'{long}msgid "Dog;Cat;"\nmsgstr "Hund;Katze;"\n\n'
               'msgid ""\n"The length of each session type in minutes. Changes apply to the next "\n"session of each type."\n'
               'msgstr ""\n"Die Länge jedes Sitzungstyps in Minuten. Änderungen werden auf die nächste "\n"Sitzung angewendet."\n\n'
               '#: app.c:3\nmsgid "A dog runs"\nmsgstr ""\n\n#~ msgid "Old"\n#~ msgstr "Alt"\n')
    (tmp_path / "de.po").write_text(catalog, encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(tmp_path / "de.po"), "-o", str(tmp_path / "out.po")])
    assert result.exit_code == 0, result.output
    written = (tmp_path / "out.po").read_text(encoding="utf-8")
    changed = [line for line in difflib.ndiff(catalog.splitlines(), written.splitlines()) if line[:1] in "+-"]
    assert changed[:2] == ['+ "Plural-Forms: nplurals=2; plural=(n != 1);\\n"', '+ "Language: de\\n"'], changed
    assert changed[2:4] == ["+ #, fuzzy", '- msgstr ""'], changed
    assert len(changed) == 5 and changed[4].startswith('+ msgstr "') and changed[4] != '+ msgstr ""', changed


@needs_lxml
@needs_polib
def test_a_translators_file_is_not_replaced_unasked_but_a_template_or_other_file_is(trained_tiny, tmp_path):
    """An XLIFF file with targets or a catalog with translations as the output: a one-line error
    naming --update, nothing written. One without a translation yet (or of another kind) is
    replaced, as any output file is."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    translated_xliff = ANGULAR_TEMPLATE.replace("A dog runs</source>", "A dog runs</source><target>Ein Hund rennt</target>")
    translated_po = POT.replace('msgid "A dog"\nmsgstr ""', 'msgid "A dog"\nmsgstr "Ein Hund"')
    (tmp_path / "messages.xlf").write_text(ANGULAR_TEMPLATE, encoding="utf-8")
    (tmp_path / "app.pot").write_text(POT, encoding="utf-8")
    for source, output, there, held in (("messages.xlf", "messages.de.xlf", translated_xliff, True),
                                        ("app.pot", "de.po", translated_po, True),
                                        ("messages.xlf", "empty.de.xlf", ANGULAR_TEMPLATE, False),
                                        ("app.pot", "other.po", "not a catalog at all\n", False)):
        (tmp_path / output).write_text(there, encoding="utf-8")
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / source), "-o", str(tmp_path / output)])
        if held:
            one_line_error(result, f"{tmp_path / output}: holds translations already; --update {tmp_path / output} keeps them")
            assert (tmp_path / output).read_text(encoding="utf-8") == there
        else:
            assert result.exit_code == 0, result.output
            assert (tmp_path / output).read_text(encoding="utf-8") != there


@needs_lxml
def test_a_trados_segment_is_marked_a_draft_from_machine_translation():
    sdl = "http://sdl.com/FileTypes/SdlXliff/1.0"
    data = (f'<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2" xmlns:sdl="{sdl}"><file><body>'
            '<trans-unit id="u1"><source>Two dogs. A cat.</source><seg-source><mrk mtype="seg" mid="1">Two dogs.</mrk> '
            '<mrk mtype="seg" mid="2">A cat.</mrk></seg-source><target><mrk mtype="seg" mid="1"/> '
            '<mrk mtype="seg" mid="2">Eine Katze.</mrk></target><sdl:seg-defs><sdl:seg id="1"/>'
            '<sdl:seg id="2" conf="Translated"/></sdl:seg-defs></trans-unit></body></file></xliff>')
    document = _xliff(data)  # (Trados writes an empty mrk for each segment not yet translated)
    assert document.texts == ["Two dogs."]
    root = etree.fromstring(document.write(["Zwei Hunde."], "de"))
    assert [mark.text for mark in root.iter("{urn:oasis:names:tc:xliff:document:1.2}mrk")][2:] == ["Zwei Hunde.", "Eine Katze."]
    assert [(s.get("conf"), s.get("origin")) for s in root.iter(f"{{{sdl}}}seg")] == [("Draft", "mt"), ("Translated", None)]
    assert file_format("a.sdlxliff") == "xliff"


@needs_lxml
def test_an_xliff_segment_of_several_lines_is_translated_line_by_line():
    """Its line breaks and each line's edge spaces kept (a message ending in a line break, as
    translate-toolkit's po2xliff writes gettext's), but for a line break inside a paired code."""
    document = _xliff('<xliff version="1.2"><file><body><trans-unit id="1" xml:space="preserve">'
                      "<source>Usage: run\n  A <g id='1'>big\ndog</g>.\n</source></trans-unit></body></file></xliff>")
    assert document.texts == ["Usage: run", "A <f1>big\ndog</f1>."]
    assert document.numbers == [1, 2]
    written = etree.fromstring(document.write(["Aufruf: run", "Ein <f1>großer Hund</f1>."], "de"))
    assert _inner(written.find(".//target")) == 'Aufruf: run\n  Ein <g id="1">großer Hund</g>.\n'


@needs_lxml
@needs_polib
def test_icu_plurals_are_translated_branch_by_branch_in_xliff_and_po():
    from nmt.decode.po_document import PoDocument

    icu = "You have {count, plural, one {# new message} other {# new messages}}."
    document = _xliff(f'<xliff version="2.0" srcLang="en"><file id="f"><unit id="1"><segment><source>{icu}</source>'
                      "</segment></unit></file></xliff>")
    # the words around the plural go into its branches, each then a whole sentence to translate
    assert document.texts == ["You have {__n__} new message.", "You have {__n__} new messages."]
    translations = ["Sie haben {__n__} neue Nachricht.", "Sie haben {__n__} neue Nachrichten."]
    written = etree.fromstring(document.write(translations, "de"))
    assert written.find(".//target").text == "{count, plural, one {Sie haben # neue Nachricht.} other {Sie haben # neue Nachrichten.}}"
    catalog = PoDocument.read(f'msgid ""\nmsgstr ""\n\nmsgid "{icu}"\nmsgstr ""\n'.encode(), "in.po")
    assert catalog.texts == document.texts
    written = polib.pofile(catalog.write(translations, "de").decode())
    assert written[0].msgstr == "{count, plural, one {Sie haben # neue Nachricht.} other {Sie haben # neue Nachrichten.}}"


@needs_lxml
def test_xliff_in_utf16_comes_back_in_utf16():
    data = codecs.BOM_UTF16_LE + XLIFF_2.replace("UTF-8", "UTF-16").encode("utf-16-le")
    document = _xliff(data)
    written = document.write(document.texts, "fr")
    assert written.decode("utf-16").count("<target>") == 3  # (one was there)


@needs_polib
def test_po_messages_left_to_translate_are_read_line_by_line_and_marked_fuzzy():
    from nmt.decode.po_document import PoDocument

    catalog = (
        'msgid ""\nmsgstr ""\n"Language: \\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n'
        '#: a.c:1\n#, c-format\nmsgid "Delete %s files & <folders>?"\nmsgstr ""\n\n'
        'msgid "Usage: run\\n"\n"  A <b>fast</b> dog.\\n"\nmsgstr ""\n\n'
        'msgid "One dog"\nmsgid_plural "%d dogs"\nmsgstr[0] ""\nmsgstr[1] ""\n\n'
        'msgid "Done"\nmsgstr "Fertig"\n\n#, fuzzy\nmsgid "Open"\nmsgstr "Offen"\n\n#~ msgid "Old"\n#~ msgstr ""\n')
    document = PoDocument.read(catalog.encode(), "in.po")
    assert document.texts == ["Delete %s files &amp; &lt;folders&gt;?", "Usage: run", "A <b>fast</b> dog.", "One dog", "%d dogs"]
    assert document.numbers == [7, 12, 12, 16, 16]  # where each message begins
    written = polib.pofile(document.write([t.upper() for t in document.texts], "de").decode())
    assert written.metadata["Language"] == "de"
    entries = {entry.msgid: entry for entry in written}
    assert entries["Delete %s files & <folders>?"].msgstr == "DELETE %S FILES & <FOLDERS>?"  # escaped for the model only
    assert entries["Delete %s files & <folders>?"].flags == ["fuzzy", "c-format"]
    assert entries["Usage: run\n  A <b>fast</b> dog.\n"].msgstr == "USAGE: RUN\n  A <B>FAST</B> DOG.\n"
    assert entries["One dog"].msgstr_plural == {0: "ONE DOG", 1: "%D DOGS"}
    assert (entries["Done"].msgstr, entries["Done"].flags) == ("Fertig", [])
    assert (entries["Open"].msgstr, entries["Open"].flags) == ("Offen", ["fuzzy"])
    assert [e.msgid for e in written.obsolete_entries()] == ["Old"]
    if shutil.which("msgfmt"):  # gettext's own compiler accepts it
        result = subprocess.run(["msgfmt", "--check-format", "-o", "/dev/null", "-"],
                                input=document.write(document.texts, "de"), capture_output=True)
        assert result.returncode == 0, result.stderr


@needs_polib
@pytest.mark.parametrize("target, forms, header", [
    ("ru", {0: "ONE DOG", 1: "%D DOGS", 2: "%D DOGS"}, "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 :"),
    ("ja", {0: "%D DOGS"}, "nplurals=1; plural=0;"),  # one form, for every number: the plural's words
    ("de", {0: "ONE DOG", 1: "%D DOGS"}, "nplurals=2; plural=(n != 1);"),
    ("xx", {0: "ONE DOG", 1: "%D DOGS"}, "nplurals=INTEGER"),  # unknown: the template's forms, and a warning
])
def test_a_template_gets_the_target_languages_plural_forms(target, forms, header):
    from nmt.decode.po_document import PoDocument

    template = ('msgid ""\nmsgstr ""\n"Language: \\n"\n"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"\n\n'
                'msgid "One dog"\nmsgid_plural "%d dogs"\nmsgstr[0] ""\nmsgstr[1] ""\n')
    document = PoDocument.read(template.encode(), "in.pot")
    written = polib.pofile(document.write([t.upper() for t in document.texts], target).decode())
    assert written[0].msgstr_plural == forms
    assert written.metadata["Plural-Forms"].startswith(header) and written.metadata["Language"] == target
    assert document.warnings == ([] if target != "xx" else [
        "no Plural-Forms for xx in its header: plural messages are given two forms; set Plural-Forms before compiling it"])


@needs_lxml
@needs_polib
def test_translate_writes_xliff_and_po_files_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path):
    from nmt.decode.po_document import PoDocument
    from nmt.decode.xliff_document import XliffDocument

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    catalog = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "a dog runs"\nmsgstr ""\n'
    for name, content, read in (("a.xlf", XLIFF_1, XliffDocument.read), ("b.xliff", XLIFF_2.replace("fr", "de"), XliffDocument.read),
                                ("c.pot", catalog, PoDocument.read)):
        (tmp_path / name).write_text(content)
        written, expected = translated_both_ways(checkpoint, translator, cfg, tmp_path / name, tmp_path / f"out.{name}",
                                                 lambda data, read=read: read(data, "in"))
        assert written == expected != content.encode()
    assert [file_format(name) for name in ("a.xlf", "b.XLIFF", "c.pot", "d.po")] == ["xliff", "xliff", "po", "po"]
    for name, content, problem in (
            ("bad.xlf", "<xliff version='1.2'><file>\n<body></file></xliff>", "bad.xlf:2: not well-formed XML"),
            ("page.xlf", "<html/>", "page.xlf: not an XLIFF file (its root element is <html>, not <xliff>)"),
            ("old.xlf", "<xliff version='3.0'/>", "old.xlf: XLIFF version 3.0 is not one nmt reads (1.2 or 2.x)"),
            ("bad.po", 'msgid "a"\nmsgstr "b\n', "bad.po:2: not a gettext catalog (a syntax error)"),
            ("latin.po", 'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "Gr\xfc\xdfe"\n',
             "latin.po:4: invalid UTF-8 (the catalog's charset) at byte")):
        (tmp_path / name).write_bytes(content.encode("latin-1"))  # (ASCII, but for latin.po)
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name), "-o", str(tmp_path / f"x.{name}")])
        one_line_error(result, problem)
        assert not (tmp_path / f"x.{name}").exists()


@pytest.mark.parametrize("module, extra", [("lxml", "XLIFF files need lxml: pip install 'nmt[localization]'"),
                                           ("polib", "gettext catalogs (.po) need polib: pip install 'nmt[localization]'")])
def test_a_missing_extra_is_named(monkeypatch, module, extra):
    import sys

    from nmt.decode.stream import read_document
    from nmt.errors import NmtError

    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(NmtError, match=extra.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        read_document("xliff" if module == "lxml" else "po", b"x", "in")


@needs_polib
def test_a_catalogs_bbcode_goes_around_the_words_it_wrapped():
    """Godot's catalogs hold its labels' rich text: each pair of BBCode tags is a code for the
    model, written back as the tags."""
    from nmt.decode.po_document import PoDocument

    catalog = PoDocument.read(b'msgid ""\nmsgstr ""\n\nmsgid "Find the [b]key[/b].[br]Go"\nmsgstr ""\n', "in.po")
    assert catalog.texts == ["Find the <f1>key</f1>.<p2/>Go"]
    written = polib.pofile(catalog.write(["Finde den <f1>Schl\u00fcssel</f1>. <p2/> Los"], "de").decode())
    assert written[0].msgstr == "Finde den [b]Schl\u00fcssel[/b].[br]Los"
