"""Markdown documents (nmt.decode.markdown_document): prose, headings, lists and table cells read
by hand, code and the rest copied, and `nmt translate` of a .md file with the tiny model, each
unit against its text translated as one line."""

from __future__ import annotations

from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.markdown_document import MarkdownDocument
from nmt.decode.translate import translate_lines

README = """---
title: A dog
---
# A dog runs in the park

A man in a red shirt is
riding a **black** bike down the street.

- A woman is singing
  in the rain.
- Two dogs play with a `ball()`.

```bash
echo "A man is sleeping."
```

    indented code: A child plays.

| Animal | What \\| it does |
|--------|--------------|
| A dog  | runs in the park |

A girl
------
<!-- A comment
over two lines -->
[link]: https://example.org/a-dog
"""
COPIED = (0, 1, 2, 4, 7, 11, 12, 13, 14, 15, 16, 17, 19, 21, 23, 24, 25, 26)  # front matter, code, rules, ... and blank lines


def test_prose_headings_items_and_cells_are_the_texts_and_code_is_copied():
    document = MarkdownDocument.read(README.splitlines())
    assert document.texts == [
        "# A dog runs in the park", "A man in a red shirt is riding a **black** bike down the street.",
        "- A woman is singing in the rain.", "- Two dogs play with a `ball()`.", "Animal", "What | it does",
        "A dog", "runs in the park", "A girl"]
    assert document.numbers == [4, 6, 9, 11, 19, 19, 21, 21, 23]
    out = document.write([text.upper() for text in document.texts])
    lines = README.splitlines()
    assert [out[i] for i in COPIED] == [lines[i] for i in COPIED]
    assert out[5:7] == ["A MAN IN A RED SHIRT IS RIDING A", "**BLACK** BIKE DOWN THE STREET."]
    assert out[8:10] == ["- A WOMAN IS SINGING", "  IN THE RAIN."]  # the item's second line indented as it was
    assert out[18:21] == ["| ANIMAL | WHAT \\| IT DOES |", lines[19], "| A DOG  | RUNS IN THE PARK |"]
    assert out[22] == "A GIRL" and len(out) == len(lines)


def test_an_html_block_is_read_as_a_page_is():
    lines = ["Intro text.", "", '<p align="center">', '  <a href="https://example.org">A dog &amp; a cat</a> •',
             '  <img src="a.png" alt="A girl">', "</p>", "", "After."]
    document = MarkdownDocument.read(lines)
    image = '<img src="a.png" alt="A girl">'
    assert document.texts == ["Intro text.", f'<a href="https://example.org">A dog &amp; a cat</a> • {image}', "A girl",
                              "After."]
    assert document.markup == [False, True, True, False]
    assert document.write(["Einleitung.", f'<a href="https://example.org">Ein Hund &amp; eine Katze</a> • {image}',
                           "Ein Mädchen", "Danach."]) == [
        "Einleitung.", "", '<p align="center">',
        '  <a href="https://example.org">Ein Hund &amp; eine Katze</a> • <img src="a.png" alt="Ein Mädchen">', "</p>", "",
        "Danach."]


def test_an_indented_block_inside_a_list_is_its_text_and_elsewhere_code():
    assert MarkdownDocument.read(["- A dog", "", "    runs in the park."]).texts == ["- A dog", "runs in the park."]
    assert MarkdownDocument.read(["A dog.", "", "    runs in the park."]).texts == ["A dog."]


def test_translate_reads_each_unit_whole_with_its_marks(trained_tiny, translator, cfg, tmp_path):
    source = tmp_path / "README.md"
    source.write_text(README, encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(source), "-o", str(tmp_path / "README.de.md")])
    assert result.exit_code == 0, result.output
    out = (tmp_path / "README.de.md").read_text(encoding="utf-8").splitlines()
    document = MarkdownDocument.read(README.splitlines())
    hyps = translate_lines(translator, document.texts, cfg.model_copy(update={"markdown": True}),
                           markup=document.markup)
    assert out == document.write([h[0].text or translator.tgt_tokenizer.decode(h[0].tokens) for h in hyps])
    assert [out[i] for i in COPIED] == [README.splitlines()[i] for i in COPIED]
