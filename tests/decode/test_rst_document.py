"""reStructuredText documents (nmt.decode.rst_document): a page's texts read by hand, its syntax
written back as docutils reads it (the translated page parsed by docutils into the same tree of
nodes as the source), and `nmt translate` of an .rst file with the tiny model."""

from __future__ import annotations

import io

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.rst_document import RstDocument

PAGE = """Getting started
===============

A dog runs on the beach. A man is riding a bicycle
down the street.

Install it with pip::

    pip install nmt

.. note::

   A child plays in the park.

.. warning:: Two dogs play in the snow.

.. admonition:: A custom title
   :class: tip

   A woman sings on a stage.

.. code-block:: python

   print("A dog")

- A girl reads a book.
- A boy jumps into
  the water.

:param name: The name of the dog.
:type name: str

See ``pip`` or `Python <https://python.org>`_ and Python_ [#]_, |version|.

.. [#] A footnote about the dog.

.. _Python: https://python.org
.. |version| replace:: 1.0

| A line of a poem.
| Another line.

+-------+-------+
| A dog | A cat |
+-------+-------+

.. figure:: dog.png
   :width: 200

   A dog in the snow.

.. A comment
   over two lines.

>>> print("A dog")
A dog
"""
TEXTS = ["Getting started", "A dog runs on the beach. A man is riding a bicycle down the street.", "Install it with pip:",
         "A child plays in the park.", "Two dogs play in the snow.", "A custom title", "A woman sings on a stage.",
         "- A girl reads a book.", "- A boy jumps into the water.", "The name of the dog.",
         "See ``pip`` or `Python <https://python.org>`_ and Python_ [#]_, |version|.", "A footnote about the dog.",
         "A line of a poem.", "Another line.", "A dog", "A cat", "A dog in the snow."]


def test_a_pages_words_are_its_texts_and_its_syntax_is_kept():
    document = RstDocument.read(PAGE.splitlines())
    assert document.texts == TEXTS
    assert document.numbers == [1, 4, 7, 13, 15, 17, 20, 26, 27, 30, 33, 35, 40, 41, 44, 44, 50]
    out = document.write(["Erste Schritte mit einem langen Titel", "Ein Hund rennt am Strand. Ein Mann fährt Rad.",
                          "Mit pip installieren:", "Ein Kind spielt.", "Zwei Hunde spielen.", "Ein eigener Titel",
                          "Eine Frau singt.", "- Ein Mädchen liest.", "- Ein Junge springt ins Wasser.", "Der Name des Hundes.",
                          "Siehe ``pip`` oder `Python <https://python.org>`_ und Python_ [#]_, |version|.",
                          "Eine Fußnote.", "Eine Zeile.", "Noch eine.", "Ein Hund", "Eine Katze", "Ein Hund im Schnee."])
    assert out[:2] == ["Erste Schritte mit einem langen Titel", "=" * 37]  # the underline as wide as the title
    assert out[6] == "Mit pip installieren::" and out[8] == "    pip install nmt"  # the literal block after "::"
    assert out[14] == ".. warning:: Zwei Hunde spielen." and out[16:18] == [".. admonition:: Ein eigener Titel", "   :class: tip"]
    assert out[29:31] == [":param name: Der Name des Hundes.", ":type name: str"]
    assert out[34] == ".. [#] Eine Fußnote." and out[39:41] == ["| Eine Zeile.", "| Noch eine."]
    assert out[42:45] == ["+----------+------------+", "| Ein Hund | Eine Katze |", "+----------+------------+"]


GRID = """+------------+----------------+
| Animal     | What it does   |
+============+================+
| A dog      | It runs on the |
|            | beach.         |
+------------+----------------+
| A cat      | - It sleeps.   |
|            | - It eats.     |
+------------+----------------+
"""
SIMPLE = """=====  ==============
Name   What it does
-----  --------------
A dog  It runs on the
       beach.
A cat  It sleeps.
=====  ==============
"""


def test_grid_and_simple_tables_have_their_cells_translated_and_are_drawn_again_around_them():
    """A cell holding a paragraph is a unit (its lines joined), one holding a list keeps its lines;
    the table is drawn again as docutils reads it: a column grown by half or 10 columns at most
    where its translations are longer, their words wrapped within it, a row as tall as its tallest
    cell."""
    grid = RstDocument.read(GRID.splitlines())
    assert grid.texts == ["Animal", "What it does", "A dog", "It runs on the beach.", "A cat"]
    assert grid.numbers == [2, 2, 4, 4, 7]
    out = grid.write(["Tier", "Was es tut", "Ein Hund", "Er rennt am Strand entlang, so schnell er kann.", "Eine Katze"])
    assert out == ["+------------+--------------------------+",
                   "| Tier       | Was es tut               |",
                   "+============+==========================+",
                   "| Ein Hund   | Er rennt am Strand       |",
                   "|            | entlang, so schnell er   |",
                   "|            | kann.                    |",
                   "+------------+--------------------------+",
                   "| Eine Katze | - It sleeps.             |",
                   "|            | - It eats.               |",
                   "+------------+--------------------------+"]
    assert _tree("\n".join(out) + "\n") == _tree(GRID)
    simple = RstDocument.read(SIMPLE.splitlines())
    assert simple.texts == ["Name", "What it does", "A dog", "It runs on the beach.", "A cat", "It sleeps."]
    out = simple.write(["Name", "Was es tut", "Ein Hund", "Er rennt am Strand entlang, so schnell er kann.",
                        "Eine Katze", "Sie schläft."])
    assert out == ["==========  ========================",
                   "Name        Was es tut",
                   "----------  ------------------------",
                   "Ein Hund    Er rennt am Strand",
                   "            entlang, so schnell er",
                   "            kann.",
                   "Eine Katze  Sie schläft.",
                   "==========  ========================"]
    assert _tree("\n".join(out) + "\n") == _tree(SIMPLE)
    # wide characters take two columns each, as docutils counts them
    out = grid.write(["動物", "何をするか", "犬", "浜辺を走る", "猫"])
    assert out[1] == "| 動物       | 何をするか     |" and _tree("\n".join(out) + "\n") == _tree(GRID)


def test_a_table_with_cells_spanning_columns_is_copied_as_it_stands():
    spans = ["+-------+-------+", "| A dog and a cat |", "+-------+-------+", "| A dog | A cat |", "+-------+-------+",
             "", "=====  =====", "Two animals", "------------", "A dog  A cat", "=====  ====="]
    document = RstDocument.read(spans)
    assert document.texts == []
    assert document.write([]) == spans


def test_a_list_tables_title_and_cells_are_translated_its_rows_kept(tmp_path):
    """A list-table: its title and each cell a unit; a row's first cell's two markers ("* - ")
    are kept as one, as translate takes them off and puts them back; docutils reads the same
    table."""
    from nmt.decode.text.list_markers import list_marker

    table = [".. list-table:: Frozen delights", "   :header-rows: 1", "", "   * - Treat", "     - Description",
             "   * - Albatross", "     - On a stick, if we took the bones out,", "       it would not be crunchy.",
             "   * - Frog", "     -"]  # (an empty cell)
    document = RstDocument.read(table)
    assert document.texts == ["Frozen delights", "* - Treat", "- Description", "* - Albatross",
                              "- On a stick, if we took the bones out, it would not be crunchy.", "* - Frog"]
    assert list_marker("   * - Treat") == "   * - " and list_marker("- - and so") == "- - "
    out = document.write(["Gefrorene Freuden", "* - Leckerei", "- Beschreibung", "* - Albatros",
                          "- Am Stiel, ohne Knochen wäre er nicht knusprig.", "* - Frosch"])
    assert out[-2:] == ["   * - Frosch", "     -"]
    assert out[0] == ".. list-table:: Gefrorene Freuden" and out[3:5] == ["   * - Leckerei", "     - Beschreibung"]
    assert _tree("\n".join(out) + "\n") == _tree("\n".join(table) + "\n")


def test_a_definition_lists_term_and_definition_are_units_of_their_own():
    """A term (a line with the lines indented under it) and its definition are translated apart
    (they had been read as one paragraph, the term's words moved into the definition's lines)."""
    page = ["Glossary", "========", "", "... a term?", "   Its definition runs on", "   over two lines.", "",
            "builder", "   A class.", "", "   Its second paragraph."]
    document = RstDocument.read(page)
    assert document.texts == ["Glossary", "... a term?", "Its definition runs on over two lines.", "builder", "A class.",
                               "Its second paragraph."]
    out = document.write(["Glossar", "... ein Begriff?", "Seine Erklärung.", "Builder", "Eine Klasse.", "Ihr zweiter Absatz."])
    assert out[3:6] == ["... ein Begriff?", "   Seine", "   Erklärung."]
    assert out[7:] == ["Builder", "   Eine Klasse.", "", "   Ihr zweiter Absatz."]
    assert _tree("\n".join(out) + "\n") == _tree("\n".join(page) + "\n")


def _tree(text: str) -> list[str]:
    """The node types of a page as docutils reads it, and its warnings."""
    core = pytest.importorskip("docutils.core")
    warnings = io.StringIO()
    tree = core.publish_doctree(text, settings_overrides={"warning_stream": warnings, "report_level": 2})
    return [node.tagname for node in tree.findall()] + warnings.getvalue().splitlines()


def test_docutils_reads_the_translated_page_as_it_reads_the_source():
    document = RstDocument.read(PAGE.splitlines())
    translated = "\n".join(document.write([f"{text}, übersetzt und länger geworden" for text in document.texts])) + "\n"
    assert _tree(translated) == _tree(PAGE)
    assert not [line for line in _tree(PAGE) if "WARNING" in line or "ERROR" in line]


def test_translate_writes_an_rst_file_as_docutils_reads_its_source(trained_tiny, tmp_path):
    """The tiny model's page: every node the source has (a model may move a link within its
    sentence, or drop a comma: the text between the nodes differs), and no warning."""
    from collections import Counter

    source = tmp_path / "index.rst"
    source.write_text(PAGE, encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(source), "-o", str(tmp_path / "index.de.rst")])
    assert result.exit_code == 0, result.output
    nodes = Counter(node for node in _tree((tmp_path / "index.de.rst").read_text(encoding="utf-8")) if node != "#text")
    assert nodes == Counter(node for node in _tree(PAGE) if node != "#text")
