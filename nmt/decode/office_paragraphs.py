"""A paragraph of an Office document (Word's w:p, PowerPoint's DrawingML a:p, a spreadsheet's
string) as inline markup for translation, and its runs rebuilt from the translation
(nmt.decode.docx_document, pptx_document, xlsx_document). In the markup
- the text in the paragraph's most used formatting is plain text, and each stretch in another
  formatting (bold, italic, a colour, a link in PowerPoint) an element around its words
  (<f1>…</f1>), so that the translation carries the formatting on the words aligned to them;
- a Word hyperlink is an element (<a1>…</a1>): its words translated, the link kept;
- anything else (a tab, a line break, an image, a field, a bookmark, a tracked change, a
  comment's mark) is a point (<p1/>) put back between the words, as it was; but for the marks
  the application computes again on opening (spelling errors, the last layout's page breaks),
  left out.
The paragraph's own properties (style, alignment, numbering) stay. Works on lxml elements.
"""

from __future__ import annotations

import copy
import html
import re
from collections import Counter
from dataclasses import dataclass, field

_OUTPUT_TAG = re.compile(r"<(/?)([fap])(\d+)(/?)>")
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
WHOLE = "whole"  # a point that is an element of the paragraph itself, not a thing inside a run


@dataclass(frozen=True)
class Dialect:
    """The names one format gives a paragraph's parts (local names, in namespace `ns`)."""
    ns: str  # "{uri}"
    link: str | None  # an element of runs that links them (Word's hyperlink); None: none
    end: str | None  # properties that close the paragraph (DrawingML's endParaRPr), kept last
    dropped: tuple[str, ...]  # marks left out (spelling errors, ...)
    spaces: tuple[str, ...]  # points with no space of the translation's beside them (a tab, a break)
    not_formatting: tuple[str, ...] = ()  # run properties' attributes that are not formatting (a spelling flag)
    preserve_space: bool = False  # a text element needs xml:space="preserve" for its edge spaces (Word)

    def __call__(self, name: str) -> str:
        return f"{self.ns}{name}"


WORD = Dialect("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}", link="hyperlink", end=None,
               dropped=("proofErr", "lastRenderedPageBreak"), spaces=("tab", "br", "cr"), preserve_space=True)
# A spreadsheet's rich text (a shared string's si, an inline string's is, a comment's text): its
# phonetic runs (rPh, a reading of the original's Japanese) left out, its phonetic properties kept last.
SPREADSHEET = Dialect("{http://schemas.openxmlformats.org/spreadsheetml/2006/main}", link=None, end="phoneticPr",
                      dropped=("rPh",), spaces=(), preserve_space=True)
DRAWING = Dialect("{http://schemas.openxmlformats.org/drawingml/2006/main}", link=None, end="endParaRPr",
                  dropped=(), spaces=("br",), not_formatting=("err", "dirty", "smtClean", "smtId", "noProof", "lang",
                                                              "altLang"))


@dataclass
class Paragraph:
    element: object  # its paragraph element
    dialect: Dialect | None  # (None: OpenDocument's, nmt.decode.odf_document)
    formats: list  # each formatting's run properties (None: none), the paragraph's most used first
    links: list = field(default_factory=list)  # each link element and the run properties of its words
    points: list = field(default_factory=list)  # each point: (its element, the properties of the run made for it or WHOLE)
    text: str = ""  # as translated: inline markup


class ParagraphTexts:
    """What a document of such paragraphs (its `paragraphs`) gives to translate."""
    paragraphs: list[Paragraph]

    @property
    def texts(self) -> list[str]:
        return [p.text for p in self.paragraphs]

    @property
    def numbers(self) -> list[int]:
        """Each text's paragraph, counted from 1 among the paragraphs translated (for warnings)."""
        return list(range(1, len(self.paragraphs) + 1))


def read_paragraph(element, dialect: Dialect) -> Paragraph | None:
    """A paragraph's markup, or None where it has no letter (left as it is)."""
    d = dialect
    pieces = []  # ("text", rPr, text) | ("link", element, rPr, text) | ("point", element, rPr or WHOLE)
    for child in element:
        if child.tag in (d("pPr"), d(d.end or "-")) or child.tag in map(d, d.dropped):
            continue
        if child.tag == d("r"):
            pieces += _run_pieces(child, d)
        elif d.link and child.tag == d(d.link) and (text := _plain_runs_text(child, d)) is not None:
            runs = child.findall(d("r"))
            pieces.append(("link", child, runs[0].find(d("rPr")) if runs else None, text))
        else:
            pieces.append(("point", child, WHOLE))
    return assembled(Paragraph(element, d, []), pieces, lambda properties: _key(properties, d))


def assembled(paragraph: Paragraph, pieces: list[tuple], key) -> Paragraph | None:
    """`paragraph` with its formats, links, points and markup text from its `pieces` (("text",
    formatting, text) | ("link", element, formatting, text) | ("point", element, how it is put back)),
    formattings told apart by `key`; None where it has no letter (left as it is)."""
    if not any(c.isalpha() for piece in pieces if piece[0] in ("text", "link") for c in piece[-1]):
        return None
    counts = Counter()
    for piece in pieces:
        if piece[0] == "text":
            counts[key(piece[1])] += len(piece[2])
    most_used = counts.most_common(1)[0][0] if counts else None
    base = next((piece[1] for piece in pieces if piece[0] == "text" and key(piece[1]) == most_used), None)
    paragraph.formats = [base]
    by_key: dict = {key(base): 0}
    out, open_format = [], 0
    for piece in pieces:
        if piece[0] == "text":
            key_of = key(piece[1])
            if key_of not in by_key:
                by_key[key_of] = len(paragraph.formats)
                paragraph.formats.append(piece[1])
            number = by_key[key_of]
            if number != open_format:
                out += [f"</f{open_format}>" if open_format else "", f"<f{number}>" if number else ""]
                open_format = number
            out.append(html.escape(piece[2], quote=False))
            continue
        if open_format:
            out.append(f"</f{open_format}>")
            open_format = 0
        if piece[0] == "link":
            paragraph.links.append((piece[1], piece[2]))
            out.append(f"<a{len(paragraph.links)}>{html.escape(piece[3], quote=False)}</a{len(paragraph.links)}>")
        else:
            paragraph.points.append(piece[1:])
            out.append(f"<p{len(paragraph.points)}/>")
    if open_format:
        out.append(f"</f{open_format}>")
    paragraph.text = "".join(out)
    return paragraph


def _run_pieces(run, d: Dialect) -> list[tuple]:
    """A run's text, and each other thing in it (a tab, a break, a drawing) as a point: a run of
    its own in the same formatting."""
    properties = run.find(d("rPr"))
    pieces: list[tuple] = []
    for child in run:
        if child.tag == d("rPr") or child.tag in map(d, d.dropped):
            continue
        if child.tag == d("t"):
            if pieces and pieces[-1][0] == "text":
                pieces[-1] = ("text", properties, pieces[-1][2] + (child.text or ""))
            else:
                pieces.append(("text", properties, child.text or ""))
        else:
            pieces.append(("point", child, properties))
    return pieces


def _plain_runs_text(element, d: Dialect) -> str | None:
    """The text of an element made of runs of text alone, or None where it holds anything else."""
    text = []
    for run in element:
        if run.tag in map(d, d.dropped):
            continue
        if run.tag != d("r") or any(c.tag not in (d("rPr"), d("t"), *map(d, d.dropped)) for c in run):
            return None
        text += [t.text or "" for t in run.findall(d("t"))]
    return "".join(text)


def _key(properties, d: Dialect) -> bytes:
    """What tells one formatting from another: the run properties, less what is not formatting."""
    from lxml import etree

    if properties is None:
        return b""
    if d.not_formatting:
        properties = copy.deepcopy(properties)
        for name in d.not_formatting:
            properties.attrib.pop(name, None)
    return etree.tostring(properties)


def _new_run(paragraph: Paragraph, properties, text: str | None = None):
    d = paragraph.dialect
    run = paragraph.element.makeelement(d("r"), {})
    if properties is not None:
        run.append(copy.deepcopy(properties))
    if text is not None:
        t = run.makeelement(d("t"), {_XML_SPACE: "preserve"} if d.preserve_space else {})
        t.text = text
        run.append(t)
    return run


def events(paragraph: Paragraph, translation: str, spacing) -> list[tuple]:
    """The translation's markup as what to write, in order: ("text", text, its formatting, the
    index of the link it is in or None), ("point", index) and ("link", index) where a link opens;
    every point placed once (one the translation lost, at the end: never an image or a field
    lost). Around a point that `spacing(element)` says stands for a space (a tab, a break), the
    translation's spaces are left out."""
    for number, (child, _) in enumerate(paragraph.points, start=1):
        if spacing(child):
            translation = re.sub(rf"\s*<p{number}/>\s*", f"<p{number}/>", translation)
    out, placed, formats, link, at = [], set(), [0], None, 0

    def add_text(text: str) -> None:
        if text:
            out.append(("text", html.unescape(text), paragraph.formats[formats[-1]], link))

    for match in _OUTPUT_TAG.finditer(translation):
        add_text(translation[at:match.start()])
        at = match.end()
        closing, kind, number = match.group(1), match.group(2), int(match.group(3))
        if kind == "p":
            if number not in placed and number <= len(paragraph.points):
                placed.add(number)
                out.append(("point", number - 1))
        elif kind == "f":
            if closing and len(formats) > 1:
                formats.pop()
            elif not closing and number < len(paragraph.formats):
                formats.append(number)
        elif not closing and number <= len(paragraph.links):
            link = number - 1
            out.append(("link", link))
        elif closing:
            link = None
    add_text(translation[at:])
    return out + [("point", i) for i in range(len(paragraph.points)) if i + 1 not in placed]


def write_paragraph(paragraph: Paragraph, translation: str) -> None:
    """The paragraph's runs, links and points rebuilt from its translation's markup."""
    element, d = paragraph.element, paragraph.dialect
    end = element.find(d(d.end)) if d.end else None
    for child in list(element):
        if child.tag != d("pPr"):
            element.remove(child)
    for event in events(paragraph, translation, lambda child: child.tag in map(d, d.spaces)):
        if event[0] == "text":
            _, text, properties, link = event
            if link is not None:
                hyperlink, properties = paragraph.links[link]
                hyperlink.append(_new_run(paragraph, properties, text))
            else:
                element.append(_new_run(paragraph, properties, text))
        elif event[0] == "point":
            element.append(_point(paragraph, *paragraph.points[event[1]]))
        else:
            hyperlink = paragraph.links[event[1]][0]
            for child in list(hyperlink):
                hyperlink.remove(child)
            element.append(hyperlink)
    if end is not None:
        element.append(end)


def _point(paragraph: Paragraph, child, properties):
    """A point as the paragraph holds it: the element itself, or a run of its own around it."""
    if properties is WHOLE:
        return child
    run = _new_run(paragraph, properties)
    run.append(child)
    return run
