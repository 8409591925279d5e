"""Markdown documents (nmt.decode.markdown_document): prose, headings, lists and table cells read
by hand, code and the rest copied, and `nmt translate` of a .md file with the tiny model, each
unit against its text translated as one line."""

from __future__ import annotations

import yaml
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
COPIED = (0, 2, 4, 7, 11, 12, 13, 14, 15, 16, 17, 19, 21, 23, 24, 25, 26)  # front matter's marks, code, rules, ... and blank lines


def test_prose_headings_items_and_cells_are_the_texts_and_code_is_copied():
    document = MarkdownDocument.read(README.splitlines())
    assert document.texts == [
        "A dog", "A dog runs in the park", "A man in a red shirt is riding a **black** bike down the street.",
        "- A woman is singing in the rain.", "- Two dogs play with a `ball()`.", "Animal", "What | it does",
        "A dog", "runs in the park", "A girl"]
    assert document.numbers == [2, 4, 6, 9, 11, 19, 19, 21, 21, 23]
    out = document.write([text.upper() for text in document.texts])
    lines = README.splitlines()
    assert [out[i] for i in COPIED] == [lines[i] for i in COPIED]
    assert out[1] == "title: A DOG" and out[3] == "# A DOG RUNS IN THE PARK"
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
        "Einleitung.", "", '<p align="center">',  # (over its two lines again, indented as they were; no tag broken)
        '  <a href="https://example.org">Ein Hund &amp; eine', '  Katze</a> • <img src="a.png" alt="Ein Mädchen">', "</p>",
        "", "Danach."]
    same = document.write(document.texts)  # each text its own translation: the block's words and lines as they were
    assert len(same) == len(lines) and " ".join(same).split() == " ".join(lines).split()


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


SITE_PAGE = """---
title: Getting started
description: "How to install the tool."
sidebar_position: 2
---

import Tabs from '@theme/Tabs';
export const version = '1.0';

## Install it {#install}

:::tip[Before you start]

A dog runs.

:::

::: details Show more {open}
:::

!!! warning "Old version"
    A man sleeps.

    ```bash
    echo "A man sleeps."
    ```

=== "Windows"
    A cat eats.

> [!NOTE]
> A bird sings
> in the tree.

{{< figure src="dog.png" caption="A dog in the snow." >}}
{{< img
  src="a.png"
  alt="A dog"
>}}
{% highlight bash %}
echo "A dog"
{% endhighlight %}

$$
x^2
$$

- [See the guide]
- [x] A dog sleeps

[^1]: A dog barks.
*[HTML]: Hyper Text Markup Language
{: .note}
<<< @/snippets/a.js

[see the guide]: guide.md"""


def test_a_documentation_sites_page_gives_its_words_and_keeps_its_syntax():
    document = MarkdownDocument.read(SITE_PAGE.splitlines())
    assert document.texts == [
        "Getting started", "How to install the tool.", "Install it", "Before you start", "A dog runs.", "Show more",
        "Old version", "A man sleeps.", "Windows", "A cat eats.", "> A bird sings in the tree.", "A dog in the snow.",
        "- [See the guide][See the guide]", "- [x] A dog sleeps", "A dog barks."]
    assert document.numbers == [2, 3, 10, 12, 14, 18, 21, 22, 28, 29, 32, 35, 48, 49, 51]
    translations = ["Los geht's: jetzt.", 'So wird das Werkzeug "installiert".', "Installieren.", "Bevor Sie beginnen",
                    "Ein Hund rennt.", "Mehr zeigen", 'Alte "Version"', "Ein Mann schläft.", "Windows",
                    "Eine Katze frisst.", "> Ein Vogel singt im Baum.", 'Ein Hund im "Schnee".',
                    "- [Siehe die Anleitung][See the guide].", "- [x] Ein Hund schläft.", "Ein Hund bellt."]
    out = document.write(translations)
    lines = SITE_PAGE.splitlines()
    assert out[1:3] == ['title: "Los geht\'s: jetzt"', 'description: "So wird das Werkzeug \\"installiert\\"."']
    assert yaml.safe_load("\n".join(out[1:4])) == {"title": "Los geht's: jetzt",
                                                    "description": 'So wird das Werkzeug "installiert".',
                                                    "sidebar_position": 2}
    assert out[9] == "## Installieren {#install}"  # no full stop after a heading: its source had none
    assert out[11] == ":::tip[Bevor Sie beginnen]" and out[17] == "::: details Mehr zeigen {open}"
    assert out[20:22] == ['!!! warning "Alte \'Version\'"', "    Ein Mann schläft."]
    assert out[27:29] == ['=== "Windows"', "    Eine Katze frisst."]
    assert out[30:33] == ["> [!NOTE]", "> Ein Vogel", "> singt im Baum."]
    assert out[34] == '{{< figure src="dog.png" caption="Ein Hund im \'Schnee\'." >}}'
    assert out[47:49] == ["- [Siehe die Anleitung][See the guide]", "- [x] Ein Hund schläft"]  # (no stop added)
    assert out[50] == "[^1]: Ein Hund bellt."
    copied = [0, *range(3, 9), 10, 12, *range(14, 17), 18, 19, *range(22, 27), 33, *range(35, 47), *range(51, 56)]
    assert [out[i] for i in copied] == [lines[i] for i in copied] and len(out) == len(lines)


def test_an_mdx_page_reads_indented_lines_as_text_and_a_components_code_props_as_code():
    lines = ["<Tabs", "  defaultValue=\"ios\"", "  values={[{label: 'iOS', value: 'ios'}]}>", "",
             "<Window style={{height: 250}}>", "", "    A dog runs.", "", "</Window>"]
    assert MarkdownDocument.read(lines).texts == []  # indented: code, in Markdown
    document = MarkdownDocument.read(lines, mdx=True)
    assert document.texts == ["A dog runs."]
    out = document.write(["Ein Hund rennt."])
    assert out[6] == "    Ein Hund rennt." and out[:6] == lines[:6] and out[7:] == lines[7:]


def test_an_mdx_file_is_translated_as_markdown(trained_tiny, tmp_path):
    source = tmp_path / "intro.mdx"
    source.write_text("---\nsidebar_position: 1\n---\n\nimport Tabs from '@theme/Tabs';\n\n# A dog\n\n| A | B |\n|---|---|\n"
                      "| a dog | a cat |\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", str(trained_tiny.out / "checkpoints" / "last.pt"),
                                      "-i", str(source), "-o", str(tmp_path / "intro.de.mdx")])
    assert result.exit_code == 0, result.output
    out = (tmp_path / "intro.de.mdx").read_text(encoding="utf-8").splitlines()
    assert out[:6] == ["---", "sidebar_position: 1", "---", "", "import Tabs from '@theme/Tabs';", ""]
    assert out[6].startswith("# ") and out[9] == "|---|---|" and out[10].count("|") == 3


def test_hugos_toml_front_matter_gives_its_title_and_keeps_the_rest():
    lines = ["+++", 'title = "A dog"', 'date = "2024-01-01"', "draft = false", "+++", "", "A dog runs."]
    document = MarkdownDocument.read(lines)
    assert document.texts == ["A dog", "A dog runs."]
    assert document.write(['Ein "Hund"', "Ein Hund rennt."]) == [
        "+++", 'title = "Ein \\"Hund\\""', *lines[2:6], "Ein Hund rennt."]


def test_a_home_pages_nested_words_are_translated_and_its_data_kept():
    lines = ["---", "layout: home", "hero:", "  name: VitePress", "  tagline: Docs in minutes", "  actions:",
             "    - theme: brand", "      text: Get started", "      link: /guide/", "features:",
             "  - title: Fast", "    details: It is fast.", "---"]
    document = MarkdownDocument.read(lines)
    assert document.texts == ["Docs in minutes", "Get started", "Fast", "It is fast."]
    out = document.write(["Doku: in Minuten", "Los geht's", "Schnell", "Es ist schnell."])
    assert yaml.safe_load("\n".join(out[1:-1])) == {
        "layout": "home", "hero": {"name": "VitePress", "tagline": "Doku: in Minuten",
                                   "actions": [{"theme": "brand", "text": "Los geht's", "link": "/guide/"}]},
        "features": [{"title": "Schnell", "details": "Es ist schnell."}]}


def test_a_footnotes_indented_lines_are_its_text():
    lines = ["A dog[^1] and a cat[^2].", "", "[^1]: A dog", "    runs fast.", "", "    A second paragraph.", "[^2]:",
             "    A cat sleeps", "    all day."]
    document = MarkdownDocument.read(lines)
    assert document.texts == ["A dog[^1] and a cat[^2].", "A dog runs fast.", "A second paragraph.", "A cat sleeps all day."]
    assert document.numbers == [1, 3, 6, 8]
    assert document.write(["Ein Hund[^1] und eine Katze[^2].", "Ein Hund rennt schnell.", "Ein zweiter Absatz.",
                           "Eine Katze schläft den ganzen Tag."]) == [
        "Ein Hund[^1] und eine Katze[^2].", "", "[^1]: Ein Hund", "    rennt schnell.", "", "    Ein zweiter Absatz.",
        "[^2]:", "    Eine Katze schläft", "    den ganzen Tag."]


def test_a_paragraphs_inline_html_is_read_with_its_marks_and_a_tag_in_a_code_span_is_code():
    """A paragraph is Markdown, its inline HTML tags and its marks read together (read as markup,
    its link's brackets were words the model dropped); ``<meta>`` is code (read as markup, its
    backticks were words too); an HTML block is markup, no Markdown read in it."""
    from nmt.decode.text.markup import mark

    document = MarkdownDocument.read(["Use `<meta>` tags.", "", "Press <kbd>Enter</kbd> in [the <b>big</b> park](a.md).",
                                      "", "<div>", "A *dog*.", "</div>"])
    assert document.markup == [False, False, True]
    code, both = (mark(text, False, True, markdown=True, page=True) for text in document.texts[:2])
    assert code.text == "Use tags." and [item.open for item in code.items] == ["`<meta>`"]
    assert both.text == "Press in the big park." and [(item.open, item.close) for item in both.items] == [
        ("<kbd>Enter</kbd>", ""), ("[", "](a.md)")] and both.items[1].children[0].open == "<b>"
    assert mark(document.texts[1], False, True, markdown=True).items[0].open == "[" and \
        mark(document.texts[1], False, True, markdown=True).text != both.text  # (not a page's: its tags are text)


def test_a_block_tag_right_after_a_paragraph_ends_it():
    """`</div>` under a paragraph's last line closes the wrapper (VitePress' and Vue's pages): read
    into the paragraph, it was written inside its text."""
    lines = ['<div class="options-api">', "", "A dog runs", "in the park.", "</div>", "", "A <b>black</b> dog", "<span>runs</span>."]
    document = MarkdownDocument.read(lines)
    assert document.texts == ["A dog runs in the park.", "A <b>black</b> dog <span>runs</span>."]
    assert document.write(["Ein Hund rennt im Park.", "Ein <b>schwarzer</b> Hund <span>rennt</span>."])[4] == "</div>"


def test_a_comment_beside_a_link_does_not_make_a_text_markup():
    """The Rust book's `[link][id]<!-- ignore -->`: the comment is a point, and the text's code
    spans stay points too."""
    document = MarkdownDocument.read(["The `Box<dyn Error>` type, in [Traits][t]<!-- ignore -->.", "", "[t]: a.md"])
    assert document.markup == [False]


def test_a_myst_directives_prose_is_translated_and_its_code_copied():
    """Jupyter Book's and Sphinx's MyST pages: a prose directive's title and body translated, its
    options copied, the code inside it copied; a directive that is code ({code-cell}, {math})
    copied whole; a role's name ({ref}) kept with its target."""
    page = ["```{note}", "A dog runs in the park.", "```", "", "````{admonition} A custom title", ":class: tip", "",
            "A woman sings. See {ref}`install`.", "", "```python", 'print("A dog")', "```", "````", "",
            ":::{dropdown} Click to see more", ":open:", "Hidden words.", ":::", "", "```{code-cell} ipython3",
            'print("A dog")', "```"]
    document = MarkdownDocument.read(page)
    assert document.texts == ["A dog runs in the park.", "A custom title", "A woman sings. See {ref}`install`.",
                              "Click to see more", "Hidden words."]
    out = document.write(["Ein Hund rennt im Park.", "Ein eigener Titel", "Eine Frau singt. Siehe {ref}`install`.",
                          "Mehr sehen", "Versteckte Wörter."])
    assert out[:3] == ["```{note}", "Ein Hund rennt im Park.", "```"]
    assert out[4:8] == ["````{admonition} Ein eigener Titel", ":class: tip", "", "Eine Frau singt. Siehe {ref}`install`."]
    assert out[9:13] == page[9:13] and out[14:18] == [":::{dropdown} Mehr sehen", ":open:", "Versteckte Wörter.", ":::"]
    assert out[19:] == page[19:]
    figure = MarkdownDocument.read(["```{figure} ../images/dog.png", ":width: 200px", "", "A dog on the beach.", "```"])
    assert figure.texts == ["A dog on the beach."]  # (a figure's argument is its image's path; its body the caption)
    from nmt.decode.text.markdown import markdown_pieces
    assert [piece for piece in markdown_pieces("See {ref}`install` now.") if piece[0] == "point"] == [
        ("point", "{ref}"), ("point", "`install`")]
