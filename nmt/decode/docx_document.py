"""Word documents in, Word documents out (`--input-format docx`, the default for .docx files;
python-docx, `pip install 'nmt[docx]'`): each paragraph translated whole, its formatting kept.

A paragraph of the body, its tables and its sections' headers and footers, and of the footnotes,
endnotes and comments, is read as inline markup (nmt.decode.text.markup), in which
- the text in the paragraph's most used formatting is plain text, and each stretch in another
  formatting (bold, italic, a colour, ...) an element around its words (<f1>…</f1>), so that the
  translation carries the formatting on the words aligned to them;
- a hyperlink is an element (<a1>…</a1>): its words translated, the link kept;
- anything else (a tab, a line break, an image, a field, a bookmark, a tracked change, a
  comment's mark) is a point (<p1/>) put back between the words, as it was; but for the marks
  Word computes again on opening (spelling errors, the last layout's page breaks), left out.
The translation is written back as new runs in those formattings; the paragraph's own properties
(style, alignment, numbering) stay. A paragraph without a letter is left as it is.
"""

from __future__ import annotations

import copy
import html
import io
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field

from nmt.errors import NmtError

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_OUTPUT_TAG = re.compile(r"<(/?)([fap])(\d+)(/?)>")
# Marks Word writes for itself and computes again on opening (spelling errors, where the last
# layout broke a page): left out, or each would cut a paragraph's text into pieces.
_DROPPED = (f"{_W}proofErr", f"{_W}lastRenderedPageBreak")
_SPACES = (f"{_W}tab", f"{_W}br", f"{_W}cr")  # points with no space of the translation's beside them
WHOLE = "whole"  # a point that is an element of the paragraph itself, not a thing inside a run


def _docx():
    try:
        import docx
    except ImportError:
        raise NmtError("Word documents need python-docx: pip install 'nmt[docx]'") from None
    return docx


@dataclass
class _Paragraph:
    element: object  # its w:p
    formats: list  # each formatting's w:rPr (None: none), the paragraph's most used first
    links: list = field(default_factory=list)  # each hyperlink's w:hyperlink and the w:rPr of its words
    points: list = field(default_factory=list)  # each point: (its element, the w:rPr of the run made for it or WHOLE)
    text: str = ""  # as translated: inline markup


class DocxDocument:
    """A .docx file read for translation: its `texts` (each paragraph's, as inline markup) in, the
    file with their translations out (`write`)."""

    def __init__(self, document, paragraphs: list[_Paragraph], notes: list):
        self.document, self.paragraphs = document, paragraphs
        self.notes = notes  # (part, its XML) of the footnotes, endnotes and comments, written back as bytes

    @classmethod
    def read(cls, data: bytes, name: str) -> "DocxDocument":
        docx = _docx()
        try:
            document = docx.Document(io.BytesIO(data))
        except (zipfile.BadZipFile, KeyError, ValueError) as e:
            raise NmtError(f"{name}: not a Word document (.docx): {e}") from None
        notes = _notes(document)
        elements = _paragraph_elements(document) + [p for _, root in notes for p in root.iter(f"{_W}p")]
        paragraphs = [p for p in (_read(element) for element in elements) if p is not None]
        return cls(document, paragraphs, notes)

    @property
    def texts(self) -> list[str]:
        return [p.text for p in self.paragraphs]

    @property
    def numbers(self) -> list[int]:
        """Each text's paragraph, counted from 1 among the paragraphs translated (for warnings)."""
        return list(range(1, len(self.paragraphs) + 1))

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The document with each paragraph's translation in its place, its language (each
        style's and run's w:lang, where set) the target's, where `language` is given."""
        for paragraph, translation in zip(self.paragraphs, translations):
            _write(paragraph, translation)
        if language:
            _set_language(self.document, language)
        from lxml import etree

        for part, root in self.notes:
            if not hasattr(part, "element"):  # a part python-docx keeps as bytes
                part._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)  # noqa: SLF001
        out = io.BytesIO()
        self.document.save(out)
        return out.getvalue()


def _paragraph_elements(document) -> list:
    """The w:p elements of the body (its tables' too) and of each section's headers and footers,
    each part once, outermost first."""
    roots, seen = [document.element.body], set()
    for section in document.sections:
        for part in (section.header, section.first_page_header, section.even_page_header,
                     section.footer, section.first_page_footer, section.even_page_footer):
            if not part.is_linked_to_previous and id(part.part) not in seen:
                seen.add(id(part.part))
                roots.append(part._element)  # noqa: SLF001 (python-docx keeps the XML there)
    return [p for root in roots for p in root.iter(f"{_W}p")]


_NOTES = ("footnotes+xml", "endnotes+xml", "comments+xml")  # the ends of those parts' content types


def _notes(document) -> list:
    """(part, XML root) of each footnotes, endnotes and comments part of the document."""
    from lxml import etree  # (python-docx's)

    found = []
    for part in document.part.package.iter_parts():
        if part.content_type.endswith(_NOTES) and "wordprocessingml" in part.content_type:
            found.append((part, part.element if hasattr(part, "element") else etree.fromstring(part.blob)))
    return found


def _read(element) -> _Paragraph | None:
    """A paragraph's markup, or None where it has no letter (left as it is)."""
    pieces = []  # ("text", rPr, text) | ("link", element, rPr, text) | ("point", element, rPr or WHOLE)
    for child in element:
        if child.tag == f"{_W}pPr" or child.tag in _DROPPED:
            continue
        if child.tag == f"{_W}r":
            pieces += _run_pieces(child)
        elif child.tag == f"{_W}hyperlink" and (text := _plain_runs_text(child)) is not None:
            runs = child.findall(f"{_W}r")
            pieces.append(("link", child, runs[0].find(f"{_W}rPr") if runs else None, text))
        else:
            pieces.append(("point", child, WHOLE))
    if not any(c.isalpha() for piece in pieces if piece[0] in ("text", "link") for c in piece[-1]):
        return None
    counts = Counter()
    for piece in pieces:
        if piece[0] == "text":
            counts[_key(piece[1])] += len(piece[2])
    most_used = counts.most_common(1)[0][0] if counts else None
    base = next((piece[1] for piece in pieces if piece[0] == "text" and _key(piece[1]) == most_used), None)
    paragraph = _Paragraph(element, [base])
    by_key: dict[bytes, int] = {_key(base): 0}
    out, open_format = [], 0
    for piece in pieces:
        if piece[0] == "text":
            key = _key(piece[1])
            if key not in by_key:
                by_key[key] = len(paragraph.formats)
                paragraph.formats.append(piece[1])
            number = by_key[key]
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


def _run_pieces(run) -> list[tuple]:
    """A run's text, and each other thing in it (a tab, a break, a drawing) as a point: a run of
    its own in the same formatting."""
    properties = run.find(f"{_W}rPr")
    pieces: list[tuple] = []
    for child in run:
        if child.tag == f"{_W}rPr" or child.tag in _DROPPED:
            continue
        if child.tag == f"{_W}t":
            if pieces and pieces[-1][0] == "text":
                pieces[-1] = ("text", properties, pieces[-1][2] + (child.text or ""))
            else:
                pieces.append(("text", properties, child.text or ""))
        else:
            pieces.append(("point", child, properties))
    return pieces


def _plain_runs_text(element) -> str | None:
    """The text of an element made of runs of text alone, or None where it holds anything else."""
    text = []
    for run in element:
        if run.tag in _DROPPED:
            continue
        if run.tag != f"{_W}r" or any(c.tag not in (f"{_W}rPr", f"{_W}t", *_DROPPED) for c in run):
            return None
        text += [t.text or "" for t in run.findall(f"{_W}t")]
    return "".join(text)


def _key(properties) -> bytes:
    from lxml import etree

    return b"" if properties is None else etree.tostring(properties)


def _new_run(properties, text: str | None = None):
    from docx.oxml import OxmlElement

    run = OxmlElement("w:r")
    if properties is not None:
        run.append(copy.deepcopy(properties))
    if text is not None:
        t = OxmlElement("w:t")
        t.text = text
        t.set(_XML_SPACE, "preserve")
        run.append(t)
    return run


def _write(paragraph: _Paragraph, translation: str) -> None:
    """The paragraph's runs, links and points rebuilt from its translation's markup."""
    element = paragraph.element
    for number, (child, _) in enumerate(paragraph.points, start=1):  # a tab or a break stands for the space
        if child.tag in _SPACES:
            translation = re.sub(rf"\s*<p{number}/>\s*", f"<p{number}/>", translation)
    for child in list(element):
        if child.tag != f"{_W}pPr":
            element.remove(child)
    placed, formats, link, at = set(), [0], None, 0

    def add_text(text: str) -> None:
        if not text:
            return
        text = html.unescape(text)
        if link is not None:
            link[0].append(_new_run(link[1], text))
        else:
            element.append(_new_run(paragraph.formats[formats[-1]], text))

    for match in _OUTPUT_TAG.finditer(translation):
        add_text(translation[at:match.start()])
        at = match.end()
        closing, kind, number = match.group(1), match.group(2), int(match.group(3))
        if kind == "p":
            if number not in placed and number <= len(paragraph.points):
                placed.add(number)
                element.append(_point(*paragraph.points[number - 1]))
        elif kind == "f":
            if closing and len(formats) > 1:
                formats.pop()
            elif not closing and number < len(paragraph.formats):
                formats.append(number)
        elif not closing and number <= len(paragraph.links):
            hyperlink, properties = paragraph.links[number - 1]
            for child in list(hyperlink):
                hyperlink.remove(child)
            element.append(hyperlink)
            link = (hyperlink, properties)
        elif closing:
            link = None
    add_text(translation[at:])
    for number, point in enumerate(paragraph.points, start=1):  # never lost: an image, a field
        if number not in placed:
            element.append(_point(*point))


def _point(child, properties):
    """A point as the paragraph holds it: the element itself, or a run of its own around it."""
    if properties is WHOLE:
        return child
    run = _new_run(properties)
    run.append(child)
    return run


def _set_language(document, language: str) -> None:
    """Every w:lang's w:val (the language of the text, for spelling and hyphenation) the target's."""
    from nmt.data.languages import language_tag

    tag = language_tag(language)
    parts = [document.element, document.styles.element]
    for part in parts:
        for lang in part.iter(f"{_W}lang"):
            if lang.get(f"{_W}val") is not None:
                lang.set(f"{_W}val", tag)
