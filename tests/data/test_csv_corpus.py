"""A CSV file as a parallel corpus (nmt.data.csv_corpus): the columns its first row names for the
two languages, or a table of two columns read as pairs."""

from __future__ import annotations

import csv
import gzip

import pytest

from nmt.data.corpora import open_corpus
from nmt.errors import NmtError
from tests.conftest import TINY_DATA, prepared_tiny
from tests.data.test_data import _shard_contents


def test_a_csv_corpus_prepares_as_its_text_files_do(tmp_path):
    en = (TINY_DATA / "train.en").read_text().splitlines()
    de = (TINY_DATA / "train.de").read_text().splitlines()
    table = tmp_path / "train.csv"
    with open(table, "w", newline="", encoding="utf-8") as f:  # (other columns, and the languages in another order)
        csv.writer(f).writerows([["id", "German", "English (en)", "score"],
                                 *([n, d, e, 0.5] for n, (e, d) in enumerate(zip(en, de)))])
    assert _shard_contents(prepared_tiny(tmp_path / "csv", f"data.train={table}").out) == \
        _shard_contents(prepared_tiny(tmp_path / "text").out)
    corpus = open_corpus(str(table), "en", "de")
    assert corpus.count_pairs() == len(list(corpus.pairs())) == len(en)


@pytest.mark.parametrize("table, languages", [
    ('en,de\n"A dog, running.",Ein Hund.\n', ("en", "de")), ('de_DE;en_US\nEin Hund.;"A dog, running."\n', ("en", "de")),
    ('English words/sentences,French words/sentences\n"A dog, running.",Ein Hund.\n', ("en", "fr")),
    ('eng,deu\n"A dog, running.",Ein Hund.\n', ("eng_Latn", "deu_Latn")),
    ('Target (de)|Source (en)\nEin Hund.|"A dog, running."\n', ("en", "de"))])
def test_the_first_row_names_the_languages_columns(tmp_path, table, languages):
    (tmp_path / "t.csv").write_text(table)
    assert list(open_corpus(str(tmp_path / "t.csv"), *languages).pairs()) == [("A dog, running.", "Ein Hund.")]


def test_two_unnamed_columns_are_pairs_and_a_quoted_line_break_a_space(tmp_path):
    with gzip.open(tmp_path / "t.csv.gz", "wt", encoding="utf-8", newline="") as f:
        f.write('\ufeffA dog.,Ein Hund.\r\n\r\n"Say ""hi""\r\n now.",Sag hallo.\r\n')
    corpus = open_corpus(str(tmp_path / "t.csv.gz"), "en", "de")
    assert list(corpus.pairs()) == [("A dog.", "Ein Hund."), ('Say "hi" now.', "Sag hallo.")]


def test_a_table_from_excel_for_mac_ends_its_rows_in_a_carriage_return_alone(tmp_path):
    """Excel for Mac's "CSV (Macintosh)": before, its first row was the whole file, and the csv
    module's error a traceback."""
    (tmp_path / "mac.csv").write_bytes('en;de\rA dog.;Ein Hund.\r"A big\rcat.";Eine große Katze.\r'.encode())
    corpus = open_corpus(str(tmp_path / "mac.csv"), "en", "de")
    assert list(corpus.pairs()) == [("A dog.", "Ein Hund."), ("A big cat.", "Eine große Katze.")]
    assert corpus.count_pairs() == 3  # (a field over two lines counts twice, as with line feeds)


@pytest.mark.parametrize("content, problem", [
    (b"id,x,y\n1,a,b\n", "t.csv:1: no columns named for 'en' and 'de' (its first row: 'id', 'x', 'y'); name them so, e.g. en,de"),
    (b"en,de\nA,B\nC\n", "t.csv:3: 1 column(s), the pair's are 1 and 2"),
    (b"en,de\nA,B\nC,\xc3\xa9\xff\n", "t.csv:3: invalid UTF-8 at byte 4 of the line"),  # (UTF-8 beside it: no reading)
    (b"en,de\r\nA,caf\xe9\r\n", 't.csv:2: invalid UTF-8 at byte 5 of the line (in Windows-1252 it reads "A,café": '
                                 'if so, convert the file with iconv -f cp1252 -t utf-8)'),  # Excel's "CSV"
    ("en,de\nA,B\n".encode("utf-16"), "t.csv: UTF-16 text (it begins with a UTF-16 byte order mark), where nmt reads "
                                       "UTF-8: convert it with iconv -f UTF-16 -t UTF-8"),
    (b"", "t.csv: empty file (no sentence pairs)")])
def test_a_table_that_cannot_give_pairs_is_a_one_line_error_naming_its_line(tmp_path, content, problem):
    (tmp_path / "t.csv").write_bytes(content)
    with pytest.raises(NmtError) as error:
        list(open_corpus(str(tmp_path / "t.csv"), "en", "de").pairs())
    assert str(error.value).endswith(problem)
