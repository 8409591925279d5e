"""Documents (`make bench-documents`): test_2016_flickr, image captions, as the web pages they come
from: a page of figures, each image's caption in its alt text and in a <figcaption>, written on
one line or wrapped at 60 columns as an editor wraps it. Translated by the demo model as HTML
(`--input-format html`, the default for .html: each block and each alt text whole;
nmt.decode.html_document) and line by line (`--input-format plain`, each line that looks like
markup read as markup). BLEU of the figcaptions and of the alt texts (their tags taken out), and
how many of the page's tags (by name, in order) the output keeps. And the same captions as a Word
document (`--input-format docx`, python-docx), a paragraph each, its second word in bold: BLEU of
the paragraphs, and how many keep a bold word; and as an e-book (`--input-format epub`) of 10
chapters, a paragraph each wrapped at 60 columns; and as a Markdown document of list items wrapped
at 60 columns, a fenced code block after every tenth: each item's BLEU and how many code blocks
come back unchanged, as Markdown (`--input-format markdown`, the default for .md), as wrapped
text and line by line; and as a documentation site's MDX page (front matter, an import, headings
with anchors, admonitions, task lists, quotes, Hugo figures, footnotes): BLEU of its units and how
much of its syntax the output keeps, as Markdown and line by line; and as a reStructuredText page
(titles, notes, items, fields, footnotes, paragraphs ending in "::" before a literal block): BLEU
and whether docutils reads the translation into the source's nodes, as rst and line by line; and as an AsciiDoc
page (titles, admonitions, items, steps, an example block, a table's cells, block titles before listings):
BLEU and whether asciidoc-py reads the translation into the source's elements, as asciidoc and line by
line; and as a PowerPoint presentation (10 captions a slide) and an OpenDocument
text, the second word of each in bold (a span of its own style): BLEU and how many keep it; and as
an Excel workbook, a cell each, its second word in bold (a rich text run): BLEU and how many keep it; and as
a PDF file (`--input-format pdf`), a paragraph each with its second word in bold, in one column
and in two: how many paragraphs the translated file gives back when read again, their BLEU, how
many keep a bold word and how much smaller they were drawn, beside the same lines as a PDF's text
comes out of it (line by line) translated one by one; and the seconds a PDF book of about 250
pages takes to read and to write; and as an XLIFF file (a unit each, its second word in a paired
code) and a gettext catalog (every tenth message ending in a placeholder): BLEU, and how many keep
their code and placeholder; and as an app's message files (i18next JSON, Android's strings.xml,
Apple's String Catalog, Qt's .ts, .NET's .resx, Java's .properties), every tenth message with a
placeholder of its format: BLEU, placeholders kept, and the file's own marks (the Catalog's and
Qt's states); and as tables, a game's texts by language (Godot's CSV) and a table of data:
BLEU, placeholders, BBCode's bold (every fifth text's second word), ids and names kept. Writes
experiments/robustness/results/documents.json.

    python -m experiments.robustness.documents [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import html
import re
import tempfile
import textwrap
from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine
from nmt.decode.html_document import HtmlDocument
from nmt.decode.stream import translate_file

RESULTS = Path(__file__).resolve().parent / "results"
WIDTH = 60
_ALT = re.compile(r'\salt="([^"]*)"')
_TAG_NAME = re.compile(r"<(/?[A-Za-z][\w-]*)")


def page(captions: list[str], wrap: bool) -> tuple[list[str], list[tuple[int, int]], list[int]]:
    """The page's lines, each figcaption's span of lines and each alt text's line."""
    lines = ["<!DOCTYPE html>", '<html lang="en">', '<head><meta charset="utf-8"><title>Flickr</title></head>',
             "<body>"]
    spans, alts = [], []
    for number, caption in enumerate(captions, start=1):
        escaped = html.escape(caption, quote=False)
        alts.append(len(lines) + 1)
        lines += ["<figure>", f'  <img src="images/{number}.jpg" alt="{html.escape(caption)}">']
        figcaption = f"  <figcaption>{escaped}</figcaption>"
        text = textwrap.fill(figcaption, WIDTH, subsequent_indent="  ", break_on_hyphens=False,
                                     break_long_words=False).splitlines() if wrap else [figcaption]
        spans.append((len(lines), len(lines) + len(text)))
        lines += [*text, "</figure>"]
    return [*lines, "</body>", "</html>"], spans, alts


def text_of(markup: str) -> str:
    return html.unescape(" ".join(re.sub(r"<[^>]*>", " ", markup).split()))


def outputs(lines: list[str], kind: str, spans: list[tuple[int, int]], alts: list[int]) -> tuple[list[str], list[str]]:
    """(figcaptions, alt texts) of a translated page: of the blocks and attributes read back as
    HTML (html: a block's lines became one), or of the source's lines (plain: one for each)."""
    if kind == "html":
        document = HtmlDocument.read(lines)
        blocks = [text_of(t) for t in document.texts[:len(document.blocks)]][1:]  # the title first
        return blocks, [text_of(t) for t in document.texts[len(document.blocks):]]
    captions = [text_of(" ".join(lines[a:b])) for a, b in spans]
    return captions, [text_of(m.group(1)) if (m := _ALT.search(lines[i])) else text_of(lines[i]) for i in alts]


def _kept(source: list[str], output: list[str]) -> int:
    """How many of the source's tag names the output has in the same order (a longest common subsequence)."""
    import difflib

    return sum(block.size for block in difflib.SequenceMatcher(None, source, output, autojunk=False).get_matching_blocks())


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--only", choices=["app_messages"],
                        help="this part alone, beside the test set as plain lines, into results/documents.PART.json")
    args = parser.parse_args()
    checkpoint, sources, references = demo_test_set(args)
    cfg = load_recipe(args.recipe).decode
    engine = load_engine([checkpoint])
    result: dict = {"captions": len(sources), "width": WIDTH}
    if args.only:
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "test.en").write_text("\n".join(sources) + "\n", encoding="utf-8")
            translate_file(engine, str(Path(folder) / "test.en"), str(Path(folder) / "test.de"), cfg)
            plain = (Path(folder) / "test.de").read_text(encoding="utf-8").splitlines()
            result["plain_lines"] = {"bleu": score(plain, references)}
            result[args.only] = app_messages(engine, cfg, sources, references, Path(folder))
        write_study(RESULTS / f"documents.{args.only}.json", checkpoint, args.test, result)
        return
    with tempfile.TemporaryDirectory() as folder:
        for wrap in (False, True):
            lines, spans, alts = page(sources, wrap)
            source = Path(folder) / "gallery.html"
            source.write_text("\n".join(lines) + "\n", encoding="utf-8")
            form = "wrapped" if wrap else "one_line"
            result[form] = {"lines": len(lines)}
            for kind in ("html", "plain"):
                output = Path(folder) / f"gallery.de.{kind}"
                translate_file(engine, str(source), str(output), cfg, input_format=kind)
                out = output.read_text(encoding="utf-8").splitlines()
                captions, alt_texts = outputs(out, kind, spans, alts)
                found = "\n".join(out)
                result[form][f"input_format_{kind}"] = {
                    "figcaption_bleu": score(captions, references),
                    **({"alt_bleu": score(alt_texts, references)} if not wrap else {}),
                    "tags": len(_TAG_NAME.findall("\n".join(lines))),
                    "tags_kept_in_order": _kept(_TAG_NAME.findall("\n".join(lines)), _TAG_NAME.findall(found)),
                    "examples": [{"output": "\n".join(out[4:10])}]}
                print(form, kind, result[form][f"input_format_{kind}"]["figcaption_bleu"]["bleu"],
                      result[form][f"input_format_{kind}"].get("alt_bleu", {}).get("bleu"), flush=True)
        result["word_document"] = word_document(engine, cfg, sources, references, Path(folder))
        result["e_book"] = e_book(engine, cfg, sources, references, Path(folder))
        result["markdown_document"] = markdown_document(engine, cfg, sources, references, Path(folder))
        result["documentation_page"] = documentation_page(engine, cfg, sources, references, Path(folder))
        result["rst_page"] = rst_page(engine, cfg, sources, references, Path(folder))
        result["asciidoc_page"] = asciidoc_page(engine, cfg, sources, references, Path(folder))
        result["presentation"] = presentation(engine, cfg, sources, references, Path(folder))
        result["opendocument_text"] = opendocument_text(engine, cfg, sources, references, Path(folder))
        result["workbook"] = workbook(engine, cfg, sources, references, Path(folder))
        result["pdf"] = {columns: pdf_document(engine, cfg, sources, references, Path(folder), columns)
                         for columns in ("one_column", "two_columns")}
        result["pdf"]["book_speed"] = pdf_book_speed(sources, Path(folder))
        result["localization_files"] = localization_files(engine, cfg, sources, references, Path(folder))
        result["app_messages"] = app_messages(engine, cfg, sources, references, Path(folder))
        result["tables"] = tables(engine, cfg, sources, references, Path(folder))
    write_study(RESULTS / "documents.json", checkpoint, args.test, result)


CODE = ["```", 'echo "A man is sleeping."', "```"]


def markdown_document(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as a Markdown list, each item wrapped at WIDTH columns (its lines after the first
    indented two spaces), a fenced code block after every tenth item."""
    lines, items = [], []  # items: each caption's span of lines
    for number, caption in enumerate(captions, start=1):
        wrapped = textwrap.fill(f"- {caption}", WIDTH, subsequent_indent="  ", break_on_hyphens=False,
                                break_long_words=False).splitlines()
        items.append((len(lines), len(lines) + len(wrapped)))
        lines += wrapped
        if number % 10 == 0:
            lines += ["", *CODE, ""]
    (folder / "captions.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out: dict = {"items": len(items), "code_blocks": len(captions) // 10,
                 "note": "as wrapped text an indented line starts a unit of its own: an item's lines are translated apart"}
    for kind in ("markdown", "wrapped", "plain"):
        translate_file(engine, str(folder / "captions.md"), str(folder / f"captions.de.{kind}"), cfg, input_format=kind)
        translated = (folder / f"captions.de.{kind}").read_text(encoding="utf-8").splitlines()
        outputs = [" ".join(line.strip() for line in translated[a:b]).removeprefix("- ") for a, b in items]
        kept = sum(translated[i:i + 3] == CODE for i in range(len(translated)) if translated[i] == CODE[0])
        out[f"input_format_{kind}"] = {"item_bleu": score(outputs, references), "code_blocks_unchanged": kept,
                                       "same_line_count": len(translated) == len(lines)}
        print("markdown", kind, out[f"input_format_{kind}"]["item_bleu"]["bleu"], kept, flush=True)
    return out


SLOTS = ("heading", "paragraph", "tip_title", "tip_body", "item", "task", "quote", "figure", "footnoted", "footnote")
IMPORT = "import Figure from '@site/src/components/Figure';"


def _unstopped(caption: str) -> str:
    return caption[:-1].rstrip() if caption.endswith(".") else caption


def site_page(captions: list[str]) -> tuple[list[str], list[tuple[int, int]], list[tuple[str, int, str]]]:
    """The captions as a documentation site's MDX page: the first the front matter's title, the rest
    in turn a heading with its anchor, a paragraph, an admonition's title and body, a list's item
    and task, a quote, a Hugo figure's caption, a paragraph with a footnote and the footnote
    (SLOTS). Its lines, each caption's span of lines, and the syntax to find in the output: (kind,
    line, what the line must start or end with)."""
    lines = ["---", f"title: {_unstopped(captions[0])}", "sidebar_position: 1", "---", "", IMPORT, ""]
    spans, syntax = [(1, 2)], [("front_matter", 0, ""), ("import", 5, IMPORT)]

    def wrapped(text: str, first: str = "", later: str = "") -> list[str]:
        return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=later, break_on_hyphens=False,
                             break_long_words=False)

    for number, caption in enumerate(captions[1:], start=1):
        slot, start = SLOTS[(number - 1) % len(SLOTS)], len(lines)
        if slot == "heading":
            block = [f"## {_unstopped(caption)} {{#part-{number}}}"]
            syntax += [("heading_start", start, "## "), ("heading_anchor", start, f" {{#part-{number}}}")]
        elif slot == "tip_title":
            block = [f":::tip[{_unstopped(caption)}]"]
            syntax += [("admonition_start", start, ":::tip["), ("admonition_title_end", start, "]")]
        elif slot == "item":
            block = wrapped(caption, "- ", "  ")
            syntax.append(("item", start, "- "))
        elif slot == "task":
            block = wrapped(caption, "- [x] ", "  ")
            syntax.append(("task", start, "- [x] "))
        elif slot == "quote":
            block = wrapped(caption, "> ", "> ")
            syntax += [("quote", line, "> ") for line in range(start, start + len(block))]
        elif slot == "figure":
            block = [f'{{{{< figure src="images/{number}.jpg" caption="{caption.replace(chr(34), chr(39))}" >}}}}']
            syntax += [("figure_start", start, f'{{{{< figure src="images/{number}.jpg" caption="'),
                       ("figure_end", start, '" >}}')]
        elif slot == "footnoted":
            block = wrapped(f"{_unstopped(caption)}[^{number}]{'.' if caption.endswith('.') else ''}")
            syntax.append(("footnote_reference", start + next(k for k, line in enumerate(block) if f"[^{number}]" in line),
                           f"[^{number}]"))
        elif slot == "footnote":
            block = [f"[^{number - 1}]: {caption}"]
            syntax.append(("footnote_label", start, f"[^{number - 1}]: "))
        else:  # a paragraph, the admonition's body
            block = wrapped(caption)
        spans.append((start, start + len(block)))
        lines += block
        if slot == "tip_body":
            lines += ["", ":::"]
            syntax.append(("admonition_end", len(lines) - 1, ":::"))
        if slot != "item":
            lines.append("")
    return lines, spans, syntax


_SYNTAX_AROUND = re.compile(r"^(?:title: |## |> |:::tip\[|- \[x\] |- |\[\^\d+\]: |\{\{< figure src=\"[^\"]*\" caption=\")|"
                            r"(?:\s*\{#part-\d+\}|\]|\" >\}\})$|\[\^\d+\]")


def _syntax_kept(lines: list[str], syntax: list[tuple[str, int, str]]) -> dict[str, list[int]]:
    """Per kind of syntax, [kept, of]: the front matter read as YAML with its fields, the other
    lines starting (or, for an anchor's, a title's and a figure's end, ending) as they must."""
    import yaml

    kept: dict[str, list[int]] = {}
    for kind, line, mark in syntax:
        if kind == "front_matter":
            try:
                fields = yaml.safe_load("\n".join(lines[1:3]))
                found = isinstance(fields, dict) and isinstance(fields.get("title"), str) \
                    and fields.get("sidebar_position") == 1 and lines[0] == lines[3] == "---"
            except yaml.YAMLError:
                found = False
        elif kind in ("heading_anchor", "admonition_title_end", "figure_end"):
            found = line < len(lines) and lines[line].endswith(mark)
        elif kind == "footnote_reference":
            found = line < len(lines) and mark in lines[line]
        else:
            found = line < len(lines) and lines[line].startswith(mark) and (kind != "admonition_end" or lines[line] == mark)
        counts = kept.setdefault(kind, [0, 0])
        counts[0] += found
        counts[1] += 1
    return kept


def documentation_page(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as a documentation site's page (site_page), translated as Markdown (the
    default for .mdx) and line by line: BLEU of its units (a caption's lines, the syntax around
    it taken out, against its reference without its full stop where the unit had none) and the
    syntax kept."""
    lines, spans, syntax = site_page(captions)
    (folder / "page.mdx").write_text("\n".join(lines) + "\n", encoding="utf-8")
    stops = [0, *(1 for _ in captions[1:])]  # which units keep their full stop: not the title, headings, titles
    for number in range(1, len(captions)):
        stops[number] = int(SLOTS[(number - 1) % len(SLOTS)] not in ("heading", "tip_title"))
    unit_references = [reference if stop else _unstopped(reference) for reference, stop in zip(references, stops)]
    out: dict = {"units": len(spans), "lines": len(lines), "syntax_checks": len(syntax)}
    for kind in ("markdown", "plain"):
        translate_file(engine, str(folder / "page.mdx"), str(folder / f"page.de.{kind}"), cfg, input_format=kind)
        translated = (folder / f"page.de.{kind}").read_text(encoding="utf-8").splitlines()
        outputs = [" ".join(_SYNTAX_AROUND.sub("", line.strip()) for line in translated[a:b]) for a, b in spans]
        kept = _syntax_kept(translated, syntax)
        out[f"input_format_{kind}"] = {
            "unit_bleu": score(outputs, unit_references), "same_line_count": len(translated) == len(lines),
            "syntax_kept": sum(k for k, _ in kept.values()), "syntax_kept_by_kind": kept,
            "example": "\n".join(translated[:20])}
        print("documentation page", kind, out[f"input_format_{kind}"]["unit_bleu"]["bleu"],
              out[f"input_format_{kind}"]["syntax_kept"], "of", len(syntax), flush=True)
    return out


RST_SLOTS = ("title", "paragraph", "note", "item", "field", "footnoted", "footnote", "literal")


def rst_lines(captions: list[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """The captions as a reStructuredText page, in turn (RST_SLOTS) a section's title, a paragraph,
    a note's body, a list's item, a field's body, a paragraph with a footnote and the footnote, and
    a paragraph ending in "::" before a literal block; its lines and each caption's span."""
    lines, spans = [], []
    for number, caption in enumerate(captions):
        slot, start = RST_SLOTS[number % len(RST_SLOTS)], len(lines)
        wrapped = textwrap.wrap(caption, WIDTH, break_on_hyphens=False, break_long_words=False)
        if slot == "title":
            block = [_unstopped(caption), "=" * len(_unstopped(caption))]
        elif slot == "note":
            lines += [".. note::", ""]
            start = len(lines)
            block = ["   " + line for line in wrapped]
        elif slot == "item":
            block = textwrap.wrap(caption, WIDTH, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False)
        elif slot == "field":
            block = [f":caption {number}: {caption}"]
        elif slot == "footnoted":
            block = textwrap.wrap(f"{_unstopped(caption)} [#]_.", WIDTH, break_on_hyphens=False)
        elif slot == "footnote":
            block = [f".. [#] {caption}"]
        elif slot == "literal":
            block = textwrap.wrap(f"{_unstopped(caption)}::", WIDTH, break_on_hyphens=False)
        else:
            block = wrapped
        spans.append((start, start + len(block)))
        lines += [*block, ""]
        if slot == "literal":
            lines += ["    print('A dog.')", ""]
    return lines, spans


_RST_SYNTAX = re.compile(r"^(?:- |\.\. \[#\] |:caption \d+: |   )|\s*\[#\]_|::$|^=+$")


def _rst_nodes(text: str) -> dict:
    """The nodes docutils reads a page into (text aside), with its warnings' count."""
    import collections
    import io

    import docutils.core

    tree = docutils.core.publish_doctree(text, settings_overrides={"warning_stream": io.StringIO(), "report_level": 5})
    nodes = collections.Counter(node.tagname for node in tree.findall() if node.tagname != "#text")
    return dict(sorted(nodes.items()))


def rst_page(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as a reStructuredText page (rst_lines), translated as rst (the default for
    .rst) and line by line: BLEU of its units (the syntax around them taken out, against the
    references without their full stops where a title or "::" has none) and whether docutils
    reads the output into the same nodes as the source."""
    lines, spans = rst_lines(captions)
    (folder / "page.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")
    unit_references = [_unstopped(reference) if RST_SLOTS[number % len(RST_SLOTS)] in ("title", "literal") else reference
                       for number, reference in enumerate(references)]
    source_nodes = _rst_nodes("\n".join(lines))
    out: dict = {"units": len(spans), "lines": len(lines), "source_nodes": source_nodes}
    for kind in ("rst", "plain"):
        translate_file(engine, str(folder / "page.rst"), str(folder / f"page.de.{kind}"), cfg, input_format=kind)
        translated = (folder / f"page.de.{kind}").read_text(encoding="utf-8")
        translated_lines = translated.splitlines()
        if kind == "rst":  # (a title's underline is drawn again; the lines of each unit are where the reader finds them)
            from nmt.decode.rst_document import RstDocument

            outputs = [text.removeprefix("- ").removesuffix(":") for text in RstDocument.read(translated_lines).texts]
        else:
            outputs = [" ".join(_RST_SYNTAX.sub("", line.strip()) for line in translated_lines[a:b]) for a, b in spans]
        outputs = [re.sub(r"\s*\[#\]_", "", output).strip() for output in outputs]
        nodes = _rst_nodes(translated)
        out[f"input_format_{kind}"] = {
            "unit_bleu": score(outputs, unit_references) if len(outputs) == len(references) else None,
            "units_read_back": len(outputs), "same_nodes": nodes == source_nodes,
            "nodes_differing": {name: [source_nodes.get(name, 0), nodes.get(name, 0)]
                                for name in sorted(set(nodes) | set(source_nodes)) if nodes.get(name) != source_nodes.get(name)},
            "example": "\n".join(translated_lines[:24])}
        print("rst page", kind, (out[f"input_format_{kind}"]["unit_bleu"] or {}).get("bleu"),
              out[f"input_format_{kind}"]["same_nodes"], flush=True)
    return out


ASCIIDOC_SLOTS = ("title", "paragraph", "note", "item", "step", "example", "cell", "block_title")


def asciidoc_lines(captions: list[str]) -> list[str]:
    """The captions as an AsciiDoc page, in turn (ASCIIDOC_SLOTS) a section's title, a paragraph,
    an admonition paragraph, a list's item, an ordered list's step, an example block's body, a
    table's cell and a block's title over a listing; its lines."""
    lines = ["= Captions", ""]
    for number, caption in enumerate(captions):
        slot = ASCIIDOC_SLOTS[number % len(ASCIIDOC_SLOTS)]
        wrapped = textwrap.wrap(caption, WIDTH, break_on_hyphens=False, break_long_words=False)
        if slot == "title":
            block = [f"== {_unstopped(caption)}"]
        elif slot == "note":
            block = textwrap.wrap(f"NOTE: {caption}", WIDTH, break_on_hyphens=False, break_long_words=False)
        elif slot == "item":
            block = textwrap.wrap(f"* {caption}", WIDTH, break_on_hyphens=False, break_long_words=False)
        elif slot == "step":
            block = textwrap.wrap(f". {caption}", WIDTH, break_on_hyphens=False, break_long_words=False)
        elif slot == "example":
            block = ["====", *wrapped, "===="]
        elif slot == "cell":
            block = ["|===", f"|{caption}", "|==="]
        elif slot == "block_title":
            block = [f".{_unstopped(caption)}", "----", "print('A dog.')", "----"]
        else:
            block = wrapped
        lines += [*block, ""]
    return lines


def _asciidoc_elements(text: str, folder: Path) -> tuple[dict, set[str]]:
    """The elements asciidoc-py converts a page into, with their counts (or {"not converted": 1}),
    and the ids it gives them."""
    import collections
    import io

    from asciidoc.api import AsciiDocAPI

    api = AsciiDocAPI()
    api.options("--no-header-footer")
    out = io.StringIO()
    (folder / "converted.adoc").write_text(text, encoding="utf-8")
    try:
        api.execute(str(folder / "converted.adoc"), out, backend="html5")
    except (Exception, SystemExit):  # (a page it cannot convert: a block left open, say)
        return {"not converted": 1}, set()
    tags = re.findall(r"<(/?[a-z0-9]+)", out.getvalue())
    return dict(sorted(collections.Counter(tags).items())), set(re.findall(r' id="([^"]*)"', out.getvalue()))


def asciidoc_page(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as an AsciiDoc page (asciidoc_lines), translated as asciidoc (the default for
    .adoc) and line by line: BLEU of its units (read back from the output by the AsciiDoc
    reader, against the references without their full stops where a title has none) and whether
    asciidoc-py converts the output into the same elements as the source, and how many of the
    source's section ids the output's sections keep (asciidoc-py makes an id of a title with an
    apostrophe otherwise than Asciidoctor, whose ids the translation keeps: `_a_man_8217_s_` where
    Asciidoctor makes `_a_mans_`)."""
    from nmt.decode.asciidoc_document import AsciidocDocument

    lines = asciidoc_lines(captions)
    (folder / "page.adoc").write_text("\n".join(lines) + "\n", encoding="utf-8")
    unit_references = [_unstopped(reference) if ASCIIDOC_SLOTS[number % len(ASCIIDOC_SLOTS)] in ("title", "block_title")
                       else reference for number, reference in enumerate(references)]
    source_elements, source_ids = _asciidoc_elements("\n".join(lines), folder)
    out: dict = {"units": len(captions), "lines": len(lines), "source_elements": source_elements,
                 "source_section_ids": len(source_ids)}
    for kind in ("asciidoc", "plain"):
        translate_file(engine, str(folder / "page.adoc"), str(folder / f"page.de.{kind}"), cfg, input_format=kind)
        translated = (folder / f"page.de.{kind}").read_text(encoding="utf-8")
        outputs = AsciidocDocument.read(translated.splitlines()).texts[1:]  # (the page's title first)
        elements, ids = _asciidoc_elements(translated, folder)
        out[f"input_format_{kind}"] = {
            "section_ids_kept": len(source_ids & ids),
            "unit_bleu": score(outputs, unit_references) if len(outputs) == len(references) else None,
            "units_read_back": len(outputs), "same_elements": elements == source_elements,
            "elements_differing": {name: [source_elements.get(name, 0), elements.get(name, 0)]
                                   for name in sorted(set(elements) | set(source_elements))
                                   if elements.get(name) != source_elements.get(name)},
            "example": "\n".join(translated.splitlines()[:30])}
        print("asciidoc page", kind, (out[f"input_format_{kind}"]["unit_bleu"] or {}).get("bleu"),
              out[f"input_format_{kind}"]["same_elements"], flush=True)
    return out


def e_book(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as an .epub of 10 chapters, a paragraph each, wrapped at WIDTH columns."""
    import zipfile

    chapters = [captions[i:i + len(captions) // 10] for i in range(0, len(captions), len(captions) // 10)]
    manifest = "".join(f'<item id="c{n}" href="c{n}.xhtml" media-type="application/xhtml+xml"/>' for n in range(len(chapters)))
    with zipfile.ZipFile(folder / "captions.epub", "w") as book:
        book.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        book.writestr("META-INF/container.xml", '<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>')
        book.writestr("content.opf", f"<package><metadata><dc:language>en</dc:language></metadata><manifest>{manifest}</manifest></package>")
        for n, chapter in enumerate(chapters):
            body = "\n".join(textwrap.fill(f"<p>{html.escape(c, quote=False)}</p>", WIDTH, break_on_hyphens=False,
                                            break_long_words=False) for c in chapter)
            book.writestr(f"c{n}.xhtml", f'<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><body>\n{body}\n</body></html>\n')
    translate_file(engine, str(folder / "captions.epub"), str(folder / "captions.de.epub"), cfg)
    book = zipfile.ZipFile(folder / "captions.de.epub")
    paragraphs = [text_of(p) for n in range(len(chapters))
                  for p in re.findall(r"<p>(.*?)</p>", book.read(f"c{n}.xhtml").decode(), re.S)]
    out = {"chapters": len(chapters), "paragraph_bleu": score(paragraphs, references),
           "language": re.search(r"<dc:language>(.*?)<", book.read("content.opf").decode())[1]}
    print("e-book", out["paragraph_bleu"]["bleu"], len(paragraphs), flush=True)
    return out


def word_document(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as a .docx of one paragraph each, the second word in bold, translated whole."""
    import docx

    document = docx.Document()
    for caption in captions:
        first, second, rest = (caption.split(" ", 2) + ["", ""])[:3]
        paragraph = document.add_paragraph(first + " ")
        paragraph.add_run(second).bold = True
        paragraph.add_run(" " + rest if rest else "")
    document.save(folder / "captions.docx")
    translate_file(engine, str(folder / "captions.docx"), str(folder / "captions.de.docx"), cfg)
    paragraphs = docx.Document(folder / "captions.de.docx").paragraphs
    out = {"paragraph_bleu": score([p.text for p in paragraphs], references),
           "bold_kept": sum(any(run.bold and run.text.strip() for run in p.runs) for p in paragraphs),
           "examples": [{"output": "".join(f"**{r.text}**" if r.bold else r.text for r in p.runs)} for p in paragraphs[:3]]}
    print("word document", out["paragraph_bleu"]["bleu"], out["bold_kept"], flush=True)
    return out


DRAWING = "http://schemas.openxmlformats.org/drawingml/2006/main"
ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def _bold_second_word(caption: str) -> tuple[str, str, str]:
    first, second, rest = (caption.split(" ", 2) + ["", ""])[:3]
    return html.escape(first + " ", quote=False), html.escape(second, quote=False), html.escape(" " + rest if rest else "",
                                                                                               quote=False)


def presentation(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as a .pptx of 100 slides, 10 paragraphs each, the second word of each bold."""
    import zipfile

    from lxml import etree

    def slide(chunk: list[str]) -> str:
        paragraphs = "".join(f'<a:p><a:r><a:rPr lang="en-US"/><a:t>{a}</a:t></a:r><a:r><a:rPr lang="en-US" b="1"/>'
                             f'<a:t>{b}</a:t></a:r><a:r><a:rPr lang="en-US"/><a:t>{c}</a:t></a:r></a:p>'
                             for a, b, c in map(_bold_second_word, chunk))
        return (f'<p:sld xmlns:a="{DRAWING}" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">'
                f"<p:cSld><p:spTree><p:sp><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>")

    slides = [captions[i:i + 10] for i in range(0, len(captions), 10)]
    with zipfile.ZipFile(folder / "captions.pptx", "w") as package:
        package.writestr("ppt/presentation.xml", "<p:presentation/>")
        for number, chunk in enumerate(slides, start=1):
            package.writestr(f"ppt/slides/slide{number}.xml", slide(chunk))
    translate_file(engine, str(folder / "captions.pptx"), str(folder / "captions.de.pptx"), cfg)
    package = zipfile.ZipFile(folder / "captions.de.pptx")
    paragraphs = [p for number in range(1, len(slides) + 1)
                  for p in etree.fromstring(package.read(f"ppt/slides/slide{number}.xml")).iter(f"{{{DRAWING}}}p")]
    texts = ["".join(t.text or "" for t in p.iter(f"{{{DRAWING}}}t")) for p in paragraphs]
    bold = sum(any(r.find(f"{{{DRAWING}}}rPr").get("b") == "1" and "".join(r.itertext()).strip()
                   for r in p.iter(f"{{{DRAWING}}}r")) for p in paragraphs)
    out = {"slides": len(slides), "paragraph_bleu": score(texts, references), "bold_kept": bold}
    print("presentation", out["paragraph_bleu"]["bleu"], bold, flush=True)
    return out


def opendocument_text(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as an .odt of one paragraph each, the second word in a span of style T1."""
    import zipfile

    from lxml import etree

    body = "".join(f'<text:p>{a}<text:span text:style-name="T1">{b}</text:span>{c}</text:p>'
                   for a, b, c in map(_bold_second_word, captions))
    with zipfile.ZipFile(folder / "captions.odt", "w") as package:
        package.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        package.writestr("content.xml", f'<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
                                        f'xmlns:text="{ODF_TEXT}"><office:body><office:text>{body}</office:text></office:body>'
                                        "</office:document-content>")
    translate_file(engine, str(folder / "captions.odt"), str(folder / "captions.de.odt"), cfg)
    paragraphs = list(etree.fromstring(zipfile.ZipFile(folder / "captions.de.odt").read("content.xml")).iter(f"{{{ODF_TEXT}}}p"))
    texts = ["".join(p.itertext()) for p in paragraphs]
    styled = sum(any(s.get(f"{{{ODF_TEXT}}}style-name") == "T1" and (s.text or "").strip()
                     for s in p.iter(f"{{{ODF_TEXT}}}span")) for p in paragraphs)
    out = {"paragraph_bleu": score(texts, references), "styled_kept": styled}
    print("opendocument text", out["paragraph_bleu"]["bleu"], styled, flush=True)
    return out



def pdf_document(engine, cfg, captions: list[str], references: list[str], folder: Path, columns: str) -> dict:
    """The captions as an A4 PDF (reportlab) of one paragraph each, the second word in bold, in one
    column or two, a page number at each page's foot; translated whole (nmt.decode.pdf_document),
    and line by line as its text comes out of it (the paragraphs' lines, read by the same reader)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph

    from nmt.decode.pdf_document import PdfDocument
    from nmt.decode.text.casing import hypothesis_text
    from nmt.decode.translate import translate_lines

    def page_number(canvas, document):
        canvas.setFont("Helvetica", 9)
        canvas.drawCentredString(A4[0] / 2, 30, str(document.page))

    margin, gap = 60, 20
    width = (A4[0] - 2 * margin - (gap if columns == "two_columns" else 0)) / (2 if columns == "two_columns" else 1)
    frames = [Frame(margin + n * (width + gap), margin, width, A4[1] - 2 * margin, id=f"c{n}")
              for n in range(2 if columns == "two_columns" else 1)]
    source = folder / f"captions.{columns}.pdf"
    document = BaseDocTemplate(str(source), pagesize=A4, invariant=True)
    document.addPageTemplates([PageTemplate(frames=frames, onPage=page_number)])
    style = getSampleStyleSheet()["BodyText"]
    document.build([Paragraph("{}<b>{}</b>{}".format(*_bold_second_word(c)), style) for c in captions])
    read = PdfDocument.read(source.read_bytes(), source.name)
    translate_file(engine, str(source), str(folder / f"captions.{columns}.de.pdf"), cfg)
    again = PdfDocument.read((folder / f"captions.{columns}.de.pdf").read_bytes(), "translated")
    # a paragraph read as its caption was written (in the reader's order, column by column), and its
    # translation: the paragraph read again from the translated file that begins where it began
    unused: dict[str, list[int]] = {}
    for number, caption in enumerate(captions):
        unused.setdefault(caption, []).append(number)
    begins = {_begins(p): p for p in again.passages}
    pairs = [(unused[text_of(p.text)].pop(0), p, begins.get(_begins(p))) for p in read.passages
             if unused.get(text_of(p.text))]
    out: dict = {"pages": len(read.pages), "lines": sum(len(p.lines) for p in read.passages),
                 "paragraphs_read": len(read.passages), "read_as_written": len(pairs),
                 "runs_on_into_the_next_column_or_page": sum(len(p.parts) > 1 for p in read.passages),
                 "paragraphs_read_again": len(again.passages),
                 "translated_where_they_began": sum(b is not None for _, _, b in pairs)}
    pairs = [(n, a, b) for n, a, b in pairs if b is not None]
    sizes = sorted(b.parts[0].size / a.parts[0].size for _, a, b in pairs)
    hyps = translate_lines(engine, [line.text for _, a, _ in pairs for line in a.lines], cfg)
    joined, at = [], 0
    for _, paragraph, _ in pairs:
        joined.append(" ".join(hypothesis_text(engine.tgt_tokenizer, h[0]) for h in hyps[at:at + len(paragraph.lines)]))
        at += len(paragraph.lines)
    wanted = [references[n] for n, _, _ in pairs]
    out |= {"paragraph_bleu": score([text_of(b.text) for _, _, b in pairs], wanted),
            "line_by_line_bleu": score(joined, wanted), "bold_kept": sum("<f1>" in b.text for _, _, b in pairs),
            "size_ratio_median": round(sizes[len(sizes) // 2], 3), "drawn_below_90_percent": sum(r < 0.9 for r in sizes),
            "note": "BLEU over the paragraphs read as written, against their own references; line by line: the "
                    "same paragraphs' lines translated one by one and joined"}
    print("pdf", columns, out["paragraph_bleu"]["bleu"], out["line_by_line_bleu"]["bleu"], out["read_as_written"],
          out["translated_where_they_began"], flush=True)
    return out


def pdf_book_speed(captions: list[str], folder: Path, copies: int = 16) -> dict:
    """Seconds to read a PDF book (the captions four to a paragraph, `copies` times over, a running
    head and a page number on each page) into passages, and to write it back from their own texts:
    the PDF handling alone, without translation."""
    import time

    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    from nmt.decode.pdf_document import PdfDocument

    def head_and_number(canvas, document):
        canvas.setFont("Helvetica", 9)
        canvas.drawString(72, 800, "Captions of pictures")
        canvas.drawCentredString(A4[0] / 2, 30, str(document.page))

    style = getSampleStyleSheet()["BodyText"]
    paragraphs = [html.escape(" ".join(captions[i:i + 4]), quote=False) for i in range(0, len(captions), 4)] * copies
    SimpleDocTemplate(str(folder / "book.pdf"), pagesize=A4, invariant=True).build(
        [Paragraph(p, style) for p in paragraphs], onFirstPage=head_and_number, onLaterPages=head_and_number)
    data = (folder / "book.pdf").read_bytes()
    started = time.perf_counter()
    book = PdfDocument.read(data, "book.pdf")
    read = time.perf_counter() - started
    written = book.write(book.texts, "de")
    out = {"pages": len(book.pages), "passages": len(book.passages), "read_seconds": round(read, 2),
           "write_seconds": round(time.perf_counter() - started - read, 2), "bytes_in": len(data), "bytes_out": len(written),
           "read_again_as_written": PdfDocument.read(written, "again").texts == book.texts}
    print("pdf book", out, flush=True)
    return out


def workbook(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as an .xlsx of one cell each (column A), the second word of each in bold (a rich
    text run), a number beside each (column B), translated whole."""
    import zipfile

    from lxml import etree

    sheet_ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    strings = "".join(f'<si><r><t xml:space="preserve">{a}</t></r><r><rPr><b/></rPr><t>{b}</t></r>'
                      f'<r><t xml:space="preserve">{c}</t></r></si>' for a, b, c in map(_bold_second_word, captions))
    rows = "".join(f'<row r="{n}"><c r="A{n}" t="s"><v>{n - 1}</v></c><c r="B{n}"><v>{n}</v></c></row>'
                   for n in range(1, len(captions) + 1))
    with zipfile.ZipFile(folder / "captions.xlsx", "w") as package:
        package.writestr("xl/workbook.xml", f'<workbook xmlns="{sheet_ns}"><sheets><sheet name="Captions"/></sheets></workbook>')
        package.writestr("xl/sharedStrings.xml", f'<sst xmlns="{sheet_ns}">{strings}</sst>')
        package.writestr("xl/worksheets/sheet1.xml", f'<worksheet xmlns="{sheet_ns}"><sheetData>{rows}</sheetData></worksheet>')
    translate_file(engine, str(folder / "captions.xlsx"), str(folder / "captions.de.xlsx"), cfg)
    package = zipfile.ZipFile(folder / "captions.de.xlsx")
    shared = etree.fromstring(package.read("xl/sharedStrings.xml"))
    texts = ["".join(t.text or "" for t in si.iter(f"{{{sheet_ns}}}t")) for si in shared]
    bold = sum(any(r.find(f"{{{sheet_ns}}}rPr") is not None and "".join(r.itertext()).strip() for r in si) for si in shared)
    out = {"cells": len(captions), "cell_bleu": score(texts, references), "bold_kept": bold,
           "numbers_unchanged": package.read("xl/worksheets/sheet1.xml") == zipfile.ZipFile(
               folder / "captions.xlsx").read("xl/worksheets/sheet1.xml")}
    print("workbook", out["cell_bleu"]["bleu"], bold, flush=True)
    return out


def localization_files(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as an XLIFF 1.2 file, a unit each, the second word in a paired code (<g>); and as
    a gettext catalog, a message each, every tenth ending in a placeholder ({0}), which is taken out
    of the output before it is scored."""
    import polib
    from lxml import etree

    units = "".join(f'<trans-unit id="{n}"><source>{a}<g id="1" ctype="bold">{b}</g>{c}</source></trans-unit>\n'
                    for n, (a, b, c) in enumerate(map(_bold_second_word, captions), start=1))
    (folder / "captions.xlf").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">'
        f'<file source-language="en" datatype="plaintext" original="captions"><body>\n{units}</body></file></xliff>\n',
        encoding="utf-8")
    translate_file(engine, str(folder / "captions.xlf"), str(folder / "captions.de.xlf"), cfg)
    ns = "{urn:oasis:names:tc:xliff:document:1.2}"
    targets = list(etree.parse(str(folder / "captions.de.xlf")).iter(f"{ns}target"))
    xliff = {"units": len(captions), "targets": len(targets),
             "target_bleu": score(["".join(t.itertext()) for t in targets], references),
             "code_kept_around_a_word": sum(any((g.text or "").strip() for g in t.iter(f"{ns}g")) for t in targets)}
    catalog = polib.POFile()
    catalog.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    for number, caption in enumerate(captions, start=1):
        catalog.append(polib.POEntry(msgid=f"{caption} {{0}}" if number % 10 == 0 else caption, msgstr=""))
    catalog.save(str(folder / "captions.pot"))
    translate_file(engine, str(folder / "captions.pot"), str(folder / "captions.de.po"), cfg)
    entries = list(polib.pofile(str(folder / "captions.de.po")))
    placeholders = [e for e in entries if e.msgid.endswith("{0}")]
    po = {"messages": len(captions), "translated_and_marked_fuzzy": sum(bool(e.msgstr) and e.fuzzy for e in entries),
          "message_bleu": score([" ".join(e.msgstr.replace("{0}", "").split()) for e in entries], references),
          "placeholders": len(placeholders), "placeholders_kept": sum("{0}" in e.msgstr for e in placeholders)}
    print("xliff", xliff, "po", po, flush=True)
    return {"xliff": xliff, "po": po}


def app_messages(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as an app's messages: an i18next JSON file, Android's strings.xml, an Apple
    String Catalog, a Qt .ts file, a .NET .resx file and a Java .properties file, a message each,
    every tenth ending in its format's placeholder ({{name}}, %1$s, %@, %1, {0}), which is taken out
    of the output before it is scored."""
    import json

    from lxml import etree

    placeholders = {"json": "{{name}}", "android": "%1$s", "xcstrings": "%@", "qt": "%1", "resx": "{0}", "properties": "{0}"}

    def message(number: int, caption: str, kind: str) -> str:
        return f"{caption} {placeholders[kind]}" if number % 10 == 0 else caption

    def measured(kind: str, outputs: list[str]) -> dict:
        with_placeholder = [o for n, o in enumerate(outputs, start=1) if n % 10 == 0]
        return {"messages": len(outputs), "bleu": score([" ".join(o.replace(placeholders[kind], "").split())
                                                         for o in outputs], references),
                "placeholders": len(with_placeholder),
                "placeholders_kept": sum(placeholders[kind] in o for o in with_placeholder)}

    result = {}
    keys = [f"caption_{n}" for n in range(1, len(captions) + 1)]
    (folder / "en.json").write_text(json.dumps({k: message(n, c, "json") for n, (k, c) in enumerate(zip(keys, captions), 1)},
                                               indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    translate_file(engine, str(folder / "en.json"), str(folder / "de.json"), cfg)
    written = json.loads((folder / "de.json").read_text(encoding="utf-8"))
    result["i18next_json"] = {**measured("json", [written[k] for k in keys]), "keys_in_order": list(written) == keys}
    (folder / "values").mkdir()
    strings = "".join(f'    <string name="{k}">{html.escape(message(n, c, "android").replace(chr(39), chr(92) + chr(39)), quote=False)}'
                      "</string>\n" for n, (k, c) in enumerate(zip(keys, captions), start=1))
    (folder / "values" / "strings.xml").write_text(f'<?xml version="1.0" encoding="utf-8"?>\n<resources>\n{strings}</resources>\n',
                                                   encoding="utf-8")
    translate_file(engine, str(folder / "values" / "strings.xml"), str(folder / "strings.de.xml"), cfg)
    texts = [element.text or "" for element in etree.parse(str(folder / "strings.de.xml")).iter("string")]
    result["android_strings"] = {**measured("android", [t.replace("\\'", "'").replace('\\"', '"') for t in texts]),
                                 "apostrophes_unescaped": sum(len(re.findall(r"(?<!\\)'", t)) for t in texts),
                                 "apostrophes": sum(t.count("'") for t in texts)}
    catalog = {"sourceLanguage": "en", "strings": {message(n, c, "xcstrings"): {} for n, c in enumerate(captions, start=1)},
               "version": "1.0"}
    (folder / "Localizable.xcstrings").write_text(json.dumps(catalog, indent=2, separators=(",", " : "), ensure_ascii=False)
                                                  + "\n", encoding="utf-8")
    translate_file(engine, str(folder / "Localizable.xcstrings"), str(folder / "Localizable.de.xcstrings"), cfg)
    units = [entry["localizations"]["de"]["stringUnit"] for entry in
             json.loads((folder / "Localizable.de.xcstrings").read_text(encoding="utf-8"))["strings"].values()]
    result["string_catalog"] = {**measured("xcstrings", [unit["value"] for unit in units]),
                                "marked_needs_review": sum(unit["state"] == "needs_review" for unit in units)}
    messages = "".join(f"    <message>\n        <source>{html.escape(message(n, c, 'qt'), quote=False)}</source>\n"
                       '        <translation type="unfinished"></translation>\n    </message>\n'
                       for n, c in enumerate(captions, start=1))
    (folder / "app_de.ts").write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n<TS version="2.1">\n<context>\n'
                                      f"    <name>Captions</name>\n{messages}</context>\n</TS>\n", encoding="utf-8")
    translate_file(engine, str(folder / "app_de.ts"), str(folder / "app_de.out.ts"), cfg)
    translations = list(etree.parse(str(folder / "app_de.out.ts")).iter("translation"))
    result["qt_ts"] = {**measured("qt", [t.text or "" for t in translations]),
                       "marked_unfinished": sum(t.get("type") == "unfinished" for t in translations)}
    entries = "".join(f'  <data name="{k}" xml:space="preserve">\n    <value>{html.escape(message(n, c, "resx"), quote=False)}</value>\n'
                      "  </data>\n" for n, (k, c) in enumerate(zip(keys, captions), start=1))
    (folder / "Resources.resx").write_text(f'<?xml version="1.0" encoding="utf-8"?>\n<root>\n{entries}</root>\n', encoding="utf-8")
    translate_file(engine, str(folder / "Resources.resx"), str(folder / "Resources.de.resx"), cfg)
    result["dotnet_resx"] = measured("resx", [v.text or "" for v in etree.parse(str(folder / "Resources.de.resx")).iter("value")])
    lines = "".join(f"{k} = {message(n, c, 'properties').replace(chr(39), chr(39) * 2) if n % 10 == 0 else c}\n"
                    for n, (k, c) in enumerate(zip(keys, captions), start=1))  # (MessageFormat's quotes beside {0})
    (folder / "messages.properties").write_text(lines, encoding="utf-8")
    translate_file(engine, str(folder / "messages.properties"), str(folder / "messages_de.properties"), cfg)
    values = [line.split(" = ", 1)[1] for line in (folder / "messages_de.properties").read_text(encoding="utf-8").splitlines()]
    result["java_properties"] = measured("properties", [v.encode().decode("unicode_escape").replace("''", "'") if "\\u" in v
                                                        else v.replace("''", "'") for v in values])
    result["laravel_php"] = laravel_messages(engine, cfg, captions, references, folder)
    print("app messages", {kind: part["bleu"]["bleu"] for kind, part in result.items()}, flush=True)
    return result


def laravel_messages(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as Laravel's lang/en/captions.php, a message each, every tenth ending in a
    placeholder (`:name`, taken out before scoring) and every tenth beside it, the one after, made a
    plural of two forms (the caption and the caption again: Laravel's `one|other`), whose first form
    is scored; read back by PHP's rules for single-quoted strings. Beside it, the captions with
    `:name` translated as lines of plain text: how many keep it."""
    def message(number: int, caption: str) -> str:
        escaped = caption.replace("\\", "\\\\").replace("'", "\\'")
        return f"{escaped} :name" if number % 10 == 0 else f"{escaped}|{escaped}" if number % 10 == 1 else escaped

    (folder / "lang" / "en").mkdir(parents=True)
    source = folder / "lang" / "en" / "captions.php"
    source.write_text("<?php\n\nreturn [\n" + "".join(f"    'caption_{n}' => '{message(n, c)}',\n"
                                                   for n, c in enumerate(captions, start=1)) + "];\n", encoding="utf-8")
    output = folder / "captions.de.php"
    translate_file(engine, str(source), str(output), cfg)
    values = [re.sub(r"\\([\\'])", r"\1", m.group(1)) for m in
              re.finditer(r"^    'caption_\d+' => '((?:[^'\\]|\\.)*)',$", output.read_text(encoding="utf-8"), re.M)]
    placeholder = [v for n, v in enumerate(values, start=1) if n % 10 == 0]
    plurals = [v for n, v in enumerate(values, start=1) if n % 10 == 1]
    firsts = [v.split("|")[0] if n % 10 == 1 else v.replace(":name", "") for n, v in enumerate(values, start=1)]
    as_text = folder / "placeholders.en.txt"  # the same captions with :name, as lines of plain text
    as_text.write_text("".join(f"{c} :name\n" for n, c in enumerate(captions, start=1) if n % 10 == 0), encoding="utf-8")
    translate_file(engine, str(as_text), str(folder / "placeholders.de.txt"), cfg)
    lines = (folder / "placeholders.de.txt").read_text(encoding="utf-8").splitlines()
    return {"messages": len(values), "bleu": score([" ".join(v.split()) for v in firsts], references),
            "placeholders": len(placeholder), "placeholders_kept": sum(v.endswith(":name") for v in placeholder),
            "plurals": len(plurals), "plurals_with_two_forms": sum(v.count("|") == 1 for v in plurals),
            "as_text_placeholders_kept": sum(":name" in line for line in lines),
            "as_text_examples": lines[:2]}


def tables(engine, cfg, captions: list[str], references: list[str], folder: Path) -> dict:
    """The captions as tables: a game's texts by language (Godot's `keys,en`, every tenth ending in
    `%s`, taken out before scoring), whose German column is added; and a table of data (id;
    caption; photo, semicolons), whose captions are translated and ids and photos' names copied."""
    import csv

    with open(folder / "texts.csv", "w", newline="", encoding="utf-8") as f:
        rows = csv.writer(f)
        rows.writerow(["keys", "en"])
        rows.writerows([f"CAPTION_{n}", f"{c} %s" if n % 10 == 0 else c] for n, c in enumerate(captions, start=1))
    translate_file(engine, str(folder / "texts.csv"), str(folder / "texts.de.csv"), cfg)
    with open(folder / "texts.de.csv", newline="", encoding="utf-8") as f:
        game = list(csv.reader(f))
    german = [row[2] for row in game[1:]]
    with_placeholder = german[9::10]
    result = {"game_texts": {"rows": len(game) - 1, "header": game[0],
                             "bleu": score([" ".join(t.replace("%s", "").split()) for t in german], references),
                             "placeholders": len(with_placeholder), "placeholders_kept": sum("%s" in t for t in with_placeholder)}}
    # every fifth text's second word in BBCode's bold (Godot's rich text), taken out before scoring
    def bold(caption: str) -> str:
        words = caption.split(" ")
        return " ".join([words[0], f"[b]{words[1]}[/b]", *words[2:]]) if len(words) > 1 else f"[b]{caption}[/b]"

    with open(folder / "rich.csv", "w", newline="", encoding="utf-8") as f:
        rows = csv.writer(f)
        rows.writerow(["keys", "en"])
        rows.writerows([f"CAPTION_{n}", bold(c) if n % 5 == 0 else c] for n, c in enumerate(captions, start=1))
    translate_file(engine, str(folder / "rich.csv"), str(folder / "rich.de.csv"), cfg)
    with open(folder / "rich.de.csv", newline="", encoding="utf-8") as f:
        rich = [row[2] for row in list(csv.reader(f))[1:]]
    bolded = rich[4::5]
    result["game_texts_bbcode"] = {
        "rows": len(rich), "bleu": score([re.sub(r"\[/?b\]", "", t) for t in rich], references),
        "bold_rows_bleu": score([re.sub(r"\[/?b\]", "", t) for t in bolded], references[4::5]),
        "bold": len(bolded), "bold_kept": sum(t.count("[b]") == t.count("[/b]") == 1 and t.index("[b]") < t.index("[/b]")
                                              for t in bolded)}
    photos = [f"img_{n:04d}.jpg" for n in range(len(captions))]
    with open(folder / "shop.csv", "w", newline="", encoding="utf-8") as f:
        rows = csv.writer(f, delimiter=";")
        rows.writerow(["id", "caption", "photo"])
        rows.writerows([n + 1, c, p] for n, (c, p) in enumerate(zip(captions, photos)))
    translate_file(engine, str(folder / "shop.csv"), str(folder / "shop.de.csv"), cfg)
    with open(folder / "shop.de.csv", newline="", encoding="utf-8") as f:
        data = list(csv.reader(f, delimiter=";"))
    result["data"] = {"rows": len(data) - 1, "header_kept": data[0] == ["id", "caption", "photo"],
                      "bleu": score([row[1] for row in data[1:]], references),
                      "ids_and_photos_kept": sum(row[0] == str(n + 1) and row[2] == photos[n] for n, row in enumerate(data[1:]))}
    print("tables", {kind: part["bleu"]["bleu"] for kind, part in result.items()}, flush=True)
    return result


def _begins(passage) -> tuple:
    """Where a PDF passage (a paragraph, over columns or pages) begins: its page, first baseline and
    left edge, to the point."""
    first = passage.parts[0]
    return first.page, round(first.lines[0].baseline), round(first.lines[0].x0)


if __name__ == "__main__":
    main()
