"""Joomla's language files (nmt.decode.ini_messages): each value translated in its double quotes,
quotes inside written as the file writes them, keys, comments and sections byte for byte; a
Joomla folder's language/en-GB/ gets language/de-DE/ beside it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.ini_messages import IniMessages
from nmt.decode.locale_paths import joomla_tag
from nmt.decode.stream import file_format
from nmt.decode.translation_record import RECORD_NAME
from tests.conftest import one_line_error
from tests.decode.conftest import translated_both_ways

JOOMLA4 = """\
; Joomla! Project
; (C) 2005 Open Source Matters, Inc. <https://www.joomla.org>

COM_EXAMPLE="A dog"
COM_EXAMPLE_XML_DESCRIPTION="<strong>A dog</strong> runs in %s."
COM_EXAMPLE_SAVE_HINT="Click \\"Save\\" to keep it." ; a note for translators
COM_EXAMPLE_N_ITEMS_DELETED="%d dogs run."
COM_EXAMPLE_N_ITEMS_DELETED_1 = "%d dog runs."
COM_EXAMPLE_EMPTY=""

[OLD]
COM_EXAMPLE_PLAIN=A cat sleeps.
COM_EXAMPLE_TWO_LINES="A man walks.
A woman waits."
"""

JOOMLA3 = 'COM_EXAMPLE_SAVE_HINT="Click "_QQ_"Save"_QQ_" to keep it."\r\nCOM_EXAMPLE="A dog"\r\n'


def test_each_value_is_read_with_its_key_and_written_back_in_its_quotes():
    document = IniMessages.read(JOOMLA4.encode(), "com_example.ini")
    assert [m.key for m in document.messages] == [
        ("COM_EXAMPLE",), ("COM_EXAMPLE_XML_DESCRIPTION",), ("COM_EXAMPLE_SAVE_HINT",), ("COM_EXAMPLE_N_ITEMS_DELETED",),
        ("COM_EXAMPLE_N_ITEMS_DELETED_1",), ("COM_EXAMPLE_PLAIN",), ("COM_EXAMPLE_TWO_LINES",)]
    assert document.texts == ["A dog", "<strong>A dog</strong> runs in %s.", 'Click "Save" to keep it.', "%d dogs run.",
                              "%d dog runs.", "A cat sleeps.", "A man walks.", "A woman waits."]
    assert document.numbers == [4, 5, 6, 7, 8, 12, 13, 13]  # (a message's lines: its key's)
    written = document.write(["Ein Hund", "<strong>Ein Hund</strong> rennt in %s.", 'Klicke "Speichern".', "%d Hunde.",
                              "%d Hund.", "Eine Katze.", "Ein Mann.", "Eine Frau."], "de").decode()
    assert written == (JOOMLA4.replace('"A dog"', '"Ein Hund"')
                       .replace("<strong>A dog</strong> runs in %s.", "<strong>Ein Hund</strong> rennt in %s.")
                       .replace('Click \\"Save\\" to keep it.', 'Klicke \\"Speichern\\".')
                       .replace('"%d dogs run."', '"%d Hunde."').replace('"%d dog runs."', '"%d Hund."')
                       .replace("=A cat sleeps.", '="Eine Katze."')  # (Joomla 1.5's unquoted value: in quotes now)
                       .replace("A man walks.\nA woman waits.", "Ein Mann.\nEine Frau."))
    old = IniMessages.read(JOOMLA3.encode(), "en-GB.com_example.ini")  # Joomla 3's "_QQ_", its line ends kept
    assert old.texts == ['Click "Save" to keep it.', "A dog"] and old.numbers == [1, 2]
    assert old.write(['Klicke "Speichern".', "Ein Hund"], "de").decode() == \
        'COM_EXAMPLE_SAVE_HINT="Klicke "_QQ_"Speichern"_QQ_"."\r\nCOM_EXAMPLE="Ein Hund"\r\n'


@pytest.mark.parametrize("tag, joomla", [("de", "de-DE"), ("fr", "fr-FR"), ("cs", "cs-CZ"), ("ja", "ja-JP"),
                                         ("pt-BR", "pt-BR"), ("zh-Hant", "zh-TW"), ("ar", "ar-AA"), ("xx", "xx-XX")])
def test_a_language_folder_is_named_with_its_country_as_joomla_names_it(tag, joomla):
    assert joomla_tag(tag) == joomla


def test_translate_writes_a_language_file_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path):
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    source = tmp_path / "com_example.ini"
    source.write_text(JOOMLA4, encoding="utf-8")
    written, expected = translated_both_ways(checkpoint, translator, cfg, source, tmp_path / "de.ini",
                                             lambda data: IniMessages.read(data, "in"))
    assert written == expected != JOOMLA4.encode()
    german = IniMessages.read(written, "de.ini")
    assert [m.key for m in german.messages] == [m.key for m in IniMessages.read(JOOMLA4.encode(), "in").messages]
    assert "%s" in german.texts[1] and german.texts[3].startswith("%d") and "<strong>" in german.texts[1]
    assert written.decode().startswith("; Joomla! Project\n; (C) 2005") and "\n[OLD]\n" in written.decode()
    assert file_format("language/en-GB/com_example.ini") == "ini"
    for name, content, problem in (
            ("open.ini", 'A="A dog."\nB="A cat\n', 'open.ini:2: the value of B has no closing double quote'),
            ("quote.ini", 'A="A "big" dog."\n', "quote.ini:1: text after the closing quote of A's value"),
            ("prose.ini", 'A="A dog."\nA cat sleeps\n', "prose.ini:2: not a line of a language file"),
            ("latin.ini", 'A="Gr\xfc\xdfe"\n', "latin.ini:1: invalid UTF-8 at byte 5")):
        (tmp_path / name).write_bytes(content.encode("latin-1"))
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name), "-o",
                                          str(tmp_path / "x.ini")])
        one_line_error(result, problem)
        assert not (tmp_path / "x.ini").exists()


def test_a_joomla_folder_gets_its_german_beside_the_english_and_keeps_its_settings(trained_tiny, tmp_path):
    """`-i SITE --update SITE`: language/en-GB/ (Joomla 4's names and Joomla 3's en-GB.* ones) gets
    language/de-DE/, a reviewer's German kept by key at the next update; an .ini file outside a
    language folder is settings, and the language folder's manifest is not a message file:
    neither is touched. Where the extension's manifest installs the English file by name, a note
    names the entry the German one needs."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    files = {"language/en-GB/com_example.ini": 'COM_EXAMPLE="A dog runs."\nCOM_EXAMPLE_CAT="A cat."\n',
             "administrator/language/en-GB/en-GB.com_example.sys.ini": 'COM_EXAMPLE_MENU="A man walks."\n',
             "language/en-GB/langmetadata.xml": '<?xml version="1.0"?>\n<metadata><name>English</name></metadata>\n',
             "settings/php.ini": 'error_log="A dog runs."\n',
             "com_example.xml": '<?xml version="1.0"?>\n<extension type="component">\n  <languages folder="language">\n'
                                '    <language tag="en-GB">en-GB/com_example.ini</language>\n  </languages>\n</extension>\n'}
    site = tmp_path / "site"
    for name, content in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(content, encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "--update", str(site)])
    assert result.exit_code == 0, result.output
    # the manifest installs the English file by name: the German one needs its entry too (the
    # administrator's file, which it does not name, needs none)
    assert " ".join(result.output.split()).count("but not") == 1
    assert ('com_example.xml installs en-GB/com_example.ini but not de-DE/com_example.ini: add <language tag="de-DE">'
            "de-DE/com_example.ini</language> beside it") in " ".join(result.output.split())
    written = {str(p.relative_to(site)) for p in site.rglob("*") if p.is_file()}
    assert written == {*files, "language/de-DE/com_example.ini", "administrator/language/de-DE/de-DE.com_example.sys.ini",
                       RECORD_NAME}
    assert all((site / name).read_text(encoding="utf-8") == content for name, content in files.items())
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output  # a new folder: the settings copied there as they are
    assert (tmp_path / "out" / "settings" / "php.ini").read_text(encoding="utf-8") == files["settings/php.ini"]
    german = site / "language" / "de-DE" / "com_example.ini"
    first = IniMessages.read(german.read_bytes(), "de.ini")
    assert [m.key for m in first.messages] == [("COM_EXAMPLE",), ("COM_EXAMPLE_CAT",)] and "A dog runs." not in first.texts
    german.write_text(german.read_text(encoding="utf-8").replace(first.texts[0], "Ein Hund rennt (geprüft)"),
                      encoding="utf-8")
    english = site / "language" / "en-GB" / "com_example.ini"
    english.write_text(files["language/en-GB/com_example.ini"].replace("A cat.", "Two cats."), encoding="utf-8")
    manifest = site / "com_example.xml"  # the entry added: no note
    manifest.write_text(files["com_example.xml"].replace(
        "</languages>", '  <language tag="de-DE">de-DE/com_example.ini</language>\n  </languages>'), encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "--update", str(site)])
    assert result.exit_code == 0 and "installs" not in result.output, result.output
    again = IniMessages.read(german.read_bytes(), "de.ini")
    assert again.texts[0] == "Ein Hund rennt (geprüft)" and again.texts[1] != first.texts[1]
