"""Tables of comma- or tab-separated values (nmt.decode.csv_table): a program's texts by language
filled into the target's column, a table of data translated cell by cell, the rest byte for byte."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.csv_table import CsvTable, names_languages
from nmt.decode.stream import file_format
from nmt.decode.translation_record import fingerprint, of_language, with_language
from nmt.errors import NmtError
from nmt.serve.files import read_upload
from tests.conftest import one_line_error
from tests.decode.conftest import translated_both_ways

# Godot's translation table: keys, then a column per language; a quoted text with the delimiter,
# quotes and a line break; a placeholder alone; a blank line; Windows' line endings
GODOT = ('keys,en,es\r\nGREET,"Hello, friend!",Hola amigo\r\nBYE,Goodbye,\r\nCOUNT,%d,\r\n\r\n'
         'SAY,"Say ""hi""\nto all",\r\nEMPTY,,\r\n')


def _upper(table: CsvTable) -> bytes:
    """The table written with each text's "translation" its capitals."""
    return table.write([text.upper() for text in table.texts], "de")


def test_a_programs_table_gets_a_column_for_the_target_language_in_the_source_columns_style():
    table = CsvTable.read(GODOT.encode(), "translations.csv").for_direction("en", "de")
    assert table.texts == ["Hello, friend!", "Goodbye", 'Say "hi"', "to all"]  # (the placeholder alone: copied)
    assert table.numbers == [2, 3, 6, 6]
    assert _upper(table).decode() == (
        'keys,en,es,de\r\nGREET,"Hello, friend!",Hola amigo,"HELLO, FRIEND!"\r\nBYE,Goodbye,,GOODBYE\r\n'
        'COUNT,%d,,%d\r\n\r\nSAY,"Say ""hi""\nto all",,"SAY ""HI""\nTO ALL"\r\nEMPTY,,,\r\n')
    # a column the table has: its filled cells kept, the others filled, a short row lengthened
    spanish = CsvTable.read((GODOT + "LAST,The end\r\n").encode(), "translations.csv").for_direction("en", "es")
    assert spanish.texts == ["Goodbye", 'Say "hi"', "to all", "The end"]
    assert _upper(spanish).decode() == (
        'keys,en,es\r\nGREET,"Hello, friend!",Hola amigo\r\nBYE,Goodbye,GOODBYE\r\nCOUNT,%d,%d\r\n\r\n'
        'SAY,"Say ""hi""\nto all","SAY ""HI""\nTO ALL"\r\nEMPTY,,\r\nLAST,The end,THE END\r\n')


@pytest.mark.parametrize("source_name, source, target, added", [
    ("en_US", "en", "pt_BR", "pt_BR"), ("en", "eng_Latn", "deu_Latn", "de"), ("eng", "eng_Latn", "deu_Latn", "de"), ("English (en)", "en", "de", "German (de)"),
    ("English(en)", "en", "fr", "French(fr)"), ("English", "en", "de", "German")])
def test_the_source_column_is_found_by_the_models_language_and_the_targets_named_alike(source_name, source, target, added):
    table = CsvTable.read(f"key;{source_name}\na;A dog\n".encode(), "t.csv").for_direction(source, target)
    assert table.texts == ["A dog"]
    assert table.write(["X"], target).decode() == f"key;{source_name};{added}\na;A dog;X\n"


def test_a_table_of_data_is_translated_cell_by_cell_its_names_ids_and_codes_kept():
    data = ('\ufeffid;name;description;photo;link\n1;Red shoe;A shoe, red and "nice".;img_001.jpg;https://a.org/s\n'
            '2;SKU_12;"Blue hat";hat.png;www.a.com\n3;;A-1234;C:\\hat;a@b.org\n4;TRUE;N/A;blue-felt-hat;no').encode()
    table = CsvTable.read(data, "shop.csv").for_direction("en", "de")
    assert table.delimiter == ";"
    assert table.texts == ["Red shoe", 'A shoe, red and "nice".', "Blue hat"]
    assert _upper(table) == ('\ufeffid;name;description;photo;link\n1;RED SHOE;A SHOE, RED AND "NICE".;img_001.jpg;'
                             'https://a.org/s\n2;SKU_12;"BLUE HAT";hat.png;www.a.com\n3;;A-1234;C:\\hat;a@b.org\n'
                             '4;TRUE;N/A;blue-felt-hat;no').encode()
    # the texts given back unchanged: the very bytes (quotes, a byte-order mark, no last line break)
    assert table.write(table.texts, "de") == data
    # chosen columns, by name (in any case) or number; a table without names
    assert CsvTable.read(data, "shop.csv").for_direction("en", "de", columns=["Description"]).texts == [
        'A shoe, red and "nice".', "Blue hat"]
    assert CsvTable.read(data, "shop.csv").for_direction("en", "de", columns=[2]).texts == ["Red shoe"]
    headless = CsvTable.read(b"A dog runs\tA cat\n", "t.tsv").for_direction("en", "de", header=False)
    assert headless.texts == ["A dog runs", "A cat"]
    assert headless.write(['Ein Hund\tder läuft', 'Eine "Katze"'], "de").decode() == (
        '"Ein Hund\tder läuft"\t"Eine ""Katze"""\n')  # (quoted: the delimiter, a quote)
    with pytest.raises(NmtError, match=r"decode.table_columns: shop.csv has no column 'price' \(its first row: 'id', "):
        CsvTable.read(data, "shop.csv").for_direction("en", "de", columns=["price"])


def test_a_column_of_single_words_is_copied_unless_named_and_a_warning_names_it():
    shop = b"id,title,status,vendor\n1,A red hat,active,Acme\n2,Blue shoes,draft,Acme\n"
    table = CsvTable.read(shop, "shop.csv").for_direction("en", "de")
    assert table.texts == ["A red hat", "Blue shoes"]
    assert table.warnings == ["column(s) of single words left as they are (states, names, codes a program reads): "
                              "'status', 'vendor'; decode.table_columns names the columns to translate"]
    named = CsvTable.read(shop, "shop.csv").for_direction("en", "de", columns=["title", "status"])
    assert named.texts == ["A red hat", "active", "Blue shoes", "draft"] and named.warnings == []


@pytest.mark.parametrize("text, delimiter", [("a,b\nc,d\n", ","), ("a;b,c\nd;e\n", ";"), ("a\tb\nc\td\n", "\t"),
                                             ("a|b\nc|d\n", "|"), ('"a;b",c\n"d;e",f\n', ","), ("one column\n", ",")])
def test_the_delimiter_is_the_one_that_cuts_every_record_alike(text, delimiter):
    assert CsvTable.read(text.encode(), "t.csv").delimiter == delimiter


def test_a_table_that_is_not_one_is_a_one_line_error_naming_its_line():
    with pytest.raises(NmtError, match=r"t.csv:3: a quoted field is never closed"):
        CsvTable.read(b'a,b\nc,d\ne,"f\ng\n', "t.csv")
    with pytest.raises(NmtError, match=r't.csv:2: invalid UTF-8 at byte 8: save the table as UTF-8 \(Excel: "CSV UTF-8"\)'):
        CsvTable.read(b"a,b\nc,\xc3\xa9\xff\n", "t.csv")
    with pytest.raises(NmtError, match=r'^t.csv:2: invalid UTF-8 at byte 9 \(in Windows-1252 it reads "c,caf\xe9": if so, '
                                       r'convert the file with iconv -f cp1252 -t utf-8\), or save the table as UTF-8 '
                                       r'\(Excel: "CSV UTF-8"\)$'):
        CsvTable.read(b"a,b\nc,caf\xe9\nd,e\n", "t.csv")
    # a quote inside a cell that does not start with one is a character of it
    assert CsvTable.read(b'a\tb\n5" long nails\tx\n', "t.tsv").for_direction("en", "de").texts == ['5" long nails']
    # and so are a quoted stretch that does not end its cell's quotes: written back as they were
    loose = b'a,b\n"A dog" runs,c d\n'
    table = CsvTable.read(loose, "t.csv").for_direction(None, "de", header=False)
    assert table.texts == ['"A dog" runs', "c d"] and table.write(table.texts, "de") == loose


def test_a_folder_fills_only_tables_that_name_languages():
    assert names_languages(b"keys,en\nA,B\n", "t.csv") and names_languages(b"en;de\n", "t.csv")
    assert not names_languages(b"id,name,description\n", "t.csv") and not names_languages(b"en\nA dog\n", "t.csv")
    assert [file_format(name) for name in ("a.csv", "b.TSV")] == ["csv", "csv"]


def test_an_uploaded_table_is_read_for_the_languages_asked_for():
    upload = read_upload("strings.csv", b"keys,en\nA,A dog\n", target="de", source="en")
    assert upload.texts == ["A dog"] and upload.write(["Ein Hund"], "de") == b"keys,en,de\nA,A dog,Ein Hund\n"
    # a source not known (auto): the first language the first row names, other than the target
    upload = read_upload("strings.csv", b"keys,de,en,fr\nA,,A dog,\n", target="de", source="auto")
    assert upload.texts == ["A dog"] and upload.write(["Ein Hund"], "de") == b"keys,de,en,fr\nA,Ein Hund,A dog,\n"
    assert read_upload("shop.csv", b"id,text\n1,A dog\n", target="de", source="auto").texts == ["A dog"]


def test_nmt_translate_writes_a_table_as_its_texts_translate(trained_tiny, translator, cfg, tmp_path):
    """`nmt translate` of a program's table and of a table of data: the model's translation of
    each text in its place; a column that is not there is a one-line error, nothing written."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    for name, content in (("strings.csv", "keys,en\nA,a dog runs\nB,\"a cat, a dog\"\nC,%d\n"),
                          ("shop.tsv", "id\ttext\n1\ta dog runs\n2\ta cat\n")):
        (tmp_path / name).write_text(content)
        written, expected = translated_both_ways(checkpoint, translator, cfg, tmp_path / name, tmp_path / f"de.{name}",
                                                 lambda data, name=name: CsvTable.read(data, name).for_direction("en", "de"))
        assert written == expected != content.encode()
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "shop.tsv"), "-o",
                                      str(tmp_path / "x.tsv"), "--set", "decode.table_columns=[price]"])
    one_line_error(result, "decode.table_columns: ", "shop.tsv has no column 'price' (its first row: 'id', 'text')")
    assert not (tmp_path / "x.tsv").exists()


def test_a_folder_updated_in_place_fills_its_programs_tables_and_leaves_its_data(trained_tiny, tmp_path):
    """A game's folder updated twice: its table of texts filled, a translator's text kept; then,
    after a source text changed, that text translated again and the rest kept as they stand (a
    reviewer's edit too), as the folder's record says; its table of data left as it is."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    game, table = tmp_path / "game", tmp_path / "game" / "locale" / "text.csv"
    table.parent.mkdir(parents=True)
    table.write_text("keys,en,de\nA,a dog runs,Ein Hund rennt (geprüft)\nB,a cat\nC,a dog\n")
    (game / "levels.csv").write_text("level,title\n1,a dog runs\n")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(game), "--update", str(game)])
    assert result.exit_code == 0, result.output
    rows = table.read_text().splitlines()
    assert rows[:2] == ["keys,en,de", "A,a dog runs,Ein Hund rennt (geprüft)"]  # a translator's kept
    assert rows[2].startswith("B,a cat,") and rows[2] != "B,a cat," and rows[3].startswith("C,a dog,") and len(rows) == 4
    assert (game / "levels.csv").read_text() == "level,title\n1,a dog runs\n"  # data: not the program's texts
    table.write_text("\n".join([rows[0], rows[1].replace("(geprüft)", "(gut)"), "B,a dog runs," + rows[2].split(",")[2],
                                rows[3]]) + "\n")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(game), "--update", str(game)])
    assert result.exit_code == 0, result.output
    assert "1 text(s) translated again (line 3): their source changed since their translation into de" in result.output
    again = table.read_text().splitlines()
    assert again[1] == "A,a dog runs,Ein Hund rennt (gut)" and again[3] == rows[3]  # unchanged sources: kept
    assert again[2].startswith("B,a dog runs,") and again[2] != "B,a dog runs," + rows[2].split(",")[2]
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(game), "--update", str(game)])
    assert "up to date" in result.output and table.read_text().splitlines() == again


def test_an_update_keeps_an_earlier_translations_cells_by_key(trained_tiny, tmp_path):
    """`-i t.csv -o t.de.csv --update t.de.csv`, and a folder -o made updated from its sources: the
    earlier table's German kept by each row's key (a reviewer's edit too), a new row translated, a
    row whose source changed since (the folder's record says) translated again."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    earlier = tmp_path / "t.de.csv"
    earlier.write_text("keys,en,de\nB,a cat,Eine Katze (geprüft)\nA,a dog runs,Ein Hund rennt (geprüft)\n")
    (tmp_path / "t.csv").write_text("keys,en\nA,a dog runs\nB,a cat\nC,a dog\n")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "t.csv"), "-o", str(earlier),
                                      "--update", str(earlier)])
    assert result.exit_code == 0, result.output
    rows = earlier.read_text().splitlines()
    assert rows[:3] == ["keys,en,de", "A,a dog runs,Ein Hund rennt (geprüft)", "B,a cat,Eine Katze (geprüft)"]
    assert rows[3].startswith("C,a dog,") and rows[3] != "C,a dog,"
    game = tmp_path / "game"
    game.mkdir()
    (game / "t.csv").write_text("keys,en\nA,a dog runs\nB,a cat\n")
    assert CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(game), "-o", str(tmp_path / "game.de")]).exit_code == 0
    made = (tmp_path / "game.de" / "t.csv").read_text().splitlines()
    (tmp_path / "game.de" / "t.csv").write_text("\n".join([made[0], made[1] + " (geprüft)", made[2]]) + "\n")
    (game / "t.csv").write_text("keys,en\nA,a dog runs\nB,a black cat\n")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(game), "--update", str(tmp_path / "game.de")])
    assert result.exit_code == 0, result.output
    assert "1 text(s) translated again (line 3)" in result.output
    updated = (tmp_path / "game.de" / "t.csv").read_text().splitlines()
    assert updated[1] == made[1] + " (geprüft)" and updated[2].startswith("B,a black cat,") and updated[2] != made[2]


def test_what_a_tables_cells_were_made_from_is_kept_for_each_language():
    table = CsvTable.read(b"keys,en,de\nA,A dog,Ein Hund\nB,A cat,Ein Hut\nB,Twice,\n", "t.csv")
    table.for_direction("en", "de", made_from={"A": fingerprint("A dog"), "B": "0" * 16})
    assert table.texts == ["Twice"]  # (B's key twice: known by no key, its filled cell kept)
    assert table.sources == {"A": fingerprint("A dog")}
    table = CsvTable.read(b"keys,en,de\nA,A dog,Ein Hund\nB,A cat,Ein Hut\n", "t.csv")
    table.for_direction("en", "de", made_from={"A": fingerprint("A dog"), "B": fingerprint("A hat")})
    assert table.texts == ["A cat"] and table.warnings == [
        "1 text(s) translated again (line 3): their source changed since their translation into de"]
    made = with_language(with_language(None, "fr", {"A": "1"}), "de", {"A": "2", "B": "3"})
    assert made.messages == {"fr:A": "1", "de:A": "2", "de:B": "3"}
    assert of_language(with_language(made, "de", {"A": "4"}), "de") == {"A": "4"}
    assert of_language(made, "fr") == {"A": "1"} and of_language(None, "fr") == {}


def test_a_cells_bbcode_is_kept_around_the_words_it_wrapped():
    table = CsvTable.read(b"keys,en\nA,A [b]blue[/b] hat[br]\nB,[b]%d[/b]\n", "t.csv").for_direction("en", "de")
    assert table.texts == ["A <f1>blue</f1> hat<p2/>"]  # (a text of placeholders and tags alone: copied)
    assert table.write(["Ein <f1>blauer</f1> Hut <p2/>"], "de") == (
        b"keys,en,de\nA,A [b]blue[/b] hat[br],Ein [b]blauer[/b] Hut[br]\nB,[b]%d[/b],[b]%d[/b]\n")
