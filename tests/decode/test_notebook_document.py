"""Jupyter notebooks (nmt.decode.notebook_document): the Markdown cells' texts read by hand, the
rest of the notebook (code, outputs, metadata) written back unchanged, the JSON as Jupyter wrote
it, bad input refused in one line, and `nmt translate` of an .ipynb file with the tiny model."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.notebook_document import NotebookDocument
from nmt.decode.stream import file_format
from tests.conftest import one_line_error

NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# A dog in the park\n", "\n", "A black dog runs on the **grass**.\n",
                                                              "\n", "- Run `pip install nmt` first."]},
        {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["setup"]},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["A dog\n"]}],
         "source": ["# A comment about the dog\n", "print(\"A dog\")"]},
        {"cell_type": "raw", "metadata": {}, "source": ["A raw cell."]},
        {"cell_type": "markdown", "metadata": {}, "source": "Two dogs play in the snow with $x^2$.\n"},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5}


def _lines(notebook: dict) -> list[str]:
    return json.dumps(notebook, indent=1, ensure_ascii=False).split("\n")  # as Jupyter writes it


def test_the_markdown_cells_are_translated_and_the_rest_written_as_it_was():
    lines = _lines(NOTEBOOK)
    document = NotebookDocument.read(lines, "dogs.ipynb")
    assert document.texts == ["A dog in the park", "A black dog runs on the **grass**.", "- Run `pip install nmt` first.",
                              "Two dogs play in the snow with $x^2$."]
    assert [lines[number - 1].strip()[:12] for number in document.numbers] == [
        '"# A dog in ', '"A black dog', '"- Run `pip ', '"source": "T']  # each text's line in the file
    out = document.write(["Ein Hund im Park", "Ein schwarzer Hund läuft über das **Gras**.",
                          "- Führe zuerst `pip install nmt` aus.", "Zwei Hunde spielen im Schnee mit $x^2$."])
    assert out[1] == ' "cells": [' and '"Ein schwarzer Hund läuft über das **Gras**.\\n",' in "\n".join(out)  # (not \\u00e4)
    written = json.loads("\n".join(out))
    assert written["cells"][0]["source"] == ["# Ein Hund im Park\n", "\n", "Ein schwarzer Hund läuft über das **Gras**.\n",
                                             "\n", "- Führe zuerst `pip install nmt` aus."]
    assert written["cells"][3]["source"] == "Zwei Hunde spielen im Schnee mit $x^2$.\n"  # a string stays a string
    assert written["cells"][1:3] == NOTEBOOK["cells"][1:3] and written["metadata"] == NOTEBOOK["metadata"]
    assert list(written) == list(NOTEBOOK) and written["nbformat"] == 4
    same = NotebookDocument.read(lines, "dogs.ipynb")
    assert same.write(same.texts) == lines  # each text its own translation: the file as it was


def test_translate_writes_a_notebook_that_runs_as_it_did(trained_tiny, tmp_path):
    assert file_format("lesson/01-intro.ipynb") == "ipynb"
    source = tmp_path / "dogs.ipynb"
    source.write_text("\n".join(_lines(NOTEBOOK)) + "\n", encoding="utf-8")
    runner = CliRunner()
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(tmp_path / "dogs.de.ipynb")])
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "dogs.de.ipynb").read_text(encoding="utf-8"))
    assert written["cells"][1:3] == NOTEBOOK["cells"][1:3] and written["metadata"] == NOTEBOOK["metadata"]
    assert written["cells"][0]["source"] != NOTEBOOK["cells"][0]["source"] and written["cells"][0]["source"][0].startswith("# ")
    assert "`pip install nmt`" in "".join(written["cells"][0]["source"])
    # what is not a notebook: one line naming the file (and the line), nothing written
    for name, content, words in (("bad.ipynb", '{"cells": [\n  {"cell_type": "markdown",\n', "bad.ipynb: line 2: not a notebook's JSON"),
                                 ("list.ipynb", '{"worksheets": []}\n', 'list.ipynb: not a Jupyter notebook: no "cells" list')):
        (tmp_path / name).write_text(content, encoding="utf-8")
        one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name),
                                           "-o", str(tmp_path / f"out.{name}")]), words)
        assert not (tmp_path / f"out.{name}").exists()
