"""OpenDocument text, presentations and spreadsheets in and out (`--input-format odt`, `odp` or
`ods`, the defaults for .odt, .odp and .ods files, as LibreOffice writes them; lxml, `pip
install 'nmt[office]'`): each paragraph and heading of the document (its body, tables, frames,
notes, a presentation's slides and notes, a spreadsheet's cells of text, the headers and footers
in styles.xml) translated whole, its formatting kept. A cell's display of a number, date or other
value is left as it is.

An OpenDocument paragraph holds its text directly, with spans around the words in another style
(<text:span text:style-name="T1">), links (<text:a>, their words translated whole, spans inside
them too, without the spans' styles) and other elements between them. It is read
as Word's is (nmt.decode.office_paragraphs): the text in the most used style plain, each other
style an element around its words, a link an element whose words are translated and whose target
is kept, a tab, a line break, a note or a frame a point put back between the words; runs of
spaces (<text:s/>) are spaces; soft page breaks (where the last layout broke a page) are left
out. The document's language (meta.xml's dc:language) is the target's; every other file is
copied byte for byte, in its order (the mimetype first and stored).
"""

from __future__ import annotations

import io
import re
import zipfile

from nmt.decode.office_paragraphs import WHOLE, Paragraph, ParagraphTexts, assembled, events
from nmt.errors import NmtError
from nmt.files import rezipped

_T = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_PARTS = ("content.xml", "styles.xml")  # where paragraphs are: the body, and the headers and footers
_SPACING = (f"{_T}tab", f"{_T}line-break")
_DROPPED = (f"{_T}soft-page-break",)
_LANGUAGE = re.compile(r"(<dc:language>)([^<]*)(</dc:language>)")
MEDIA_TYPES = {"odt": "application/vnd.oasis.opendocument.text",
               "odp": "application/vnd.oasis.opendocument.presentation",
               "ods": "application/vnd.oasis.opendocument.spreadsheet"}
_KINDS = {"odt": "text", "odp": "presentation", "ods": "spreadsheet"}
_TABLE_CELL = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}table-cell"
_VALUE_TYPE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}value-type"


class OdfDocument(ParagraphTexts):
    """An .odt or .odp file read for translation: its `texts` (each paragraph's, as inline markup)
    in, the file with their translations out (`write`)."""

    def __init__(self, data: bytes, roots: dict, paragraphs: list[Paragraph]):
        self.data, self.roots, self.paragraphs = data, roots, paragraphs

    @classmethod
    def read(cls, data: bytes, name: str, kind: str = "odt") -> "OdfDocument":
        try:
            from lxml import etree
        except ImportError:
            raise NmtError("OpenDocument files need lxml: pip install 'nmt[office]'") from None
        try:
            package = zipfile.ZipFile(io.BytesIO(data))
            if package.read("mimetype").decode("ascii", "replace").strip() != MEDIA_TYPES[kind]:
                raise KeyError(f"its mimetype is not {MEDIA_TYPES[kind]}")
            roots = {part: etree.fromstring(package.read(part)) for part in _PARTS if part in package.namelist()}
        except (zipfile.BadZipFile, KeyError, etree.XMLSyntaxError) as e:
            raise NmtError(f"{name}: not an OpenDocument {_KINDS[kind]} (.{kind}): {e}") from None
        elements = [p for root in roots.values() for p in root.iter(f"{_T}p", f"{_T}h") if not _shows_a_value(p)]
        paragraphs = [p for p in (_read(element) for element in elements) if p is not None]
        return cls(data, roots, paragraphs)

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The document with each paragraph's translation in its place, and meta.xml's dc:language
        the target's (`language`, where given)."""
        from lxml import etree

        from nmt.data.languages import language_tag

        for paragraph, translation in zip(self.paragraphs, translations):
            _write(paragraph, translation)
        replaced = {part: etree.tostring(root, xml_declaration=True, encoding="UTF-8") for part, root in self.roots.items()}
        package = zipfile.ZipFile(io.BytesIO(self.data))
        if language and "meta.xml" in package.namelist():
            meta = package.read("meta.xml").decode("utf-8")
            replaced["meta.xml"] = _LANGUAGE.sub(lambda m: m[1] + language_tag(language) + m[3], meta).encode()
        return rezipped(self.data, replaced)


def _shows_a_value(paragraph) -> bool:
    """Whether a paragraph is a spreadsheet cell's display of a number, date, time, currency or
    truth value (its office:value-type other than string), which the application writes again
    from the value: left as it is."""
    cell = paragraph.getparent()
    return cell is not None and cell.tag == _TABLE_CELL and cell.get(_VALUE_TYPE, "string") != "string"


def _read(element) -> Paragraph | None:
    """A paragraph's markup (office_paragraphs.assembled: formattings are style names, None the
    paragraph's own), or None where it has no letter."""
    pieces: list[tuple] = []

    def add_text(style, text: str | None) -> None:
        if not text:
            return
        if pieces and pieces[-1][0] == "text" and pieces[-1][1] == style:
            pieces[-1] = ("text", style, pieces[-1][2] + text)
        else:
            pieces.append(("text", style, text))

    def read_inside(parent, style) -> None:
        add_text(style, parent.text)
        for child in parent:
            if child.tag == f"{_T}span":
                read_inside(child, child.get(f"{_T}style-name", style))
            elif child.tag == f"{_T}s":
                add_text(style, " " * int(child.get(f"{_T}c", "1")))
            elif child.tag == f"{_T}a" and (text := _link_text(child)):
                pieces.append(("link", child, style, text))
            elif child.tag not in _DROPPED:
                pieces.append(("point", child, WHOLE))
            add_text(style, child.tail)

    read_inside(element, None)
    return assembled(Paragraph(element, None, []), pieces, lambda style: style)


def _link_text(link) -> str | None:
    """A link's words, where it holds nothing but text, spans of text and runs of spaces (the spans'
    styles left out: the link's words are translated as one); None where it holds anything else."""
    words = [link.text or ""]
    for child in link.iterdescendants():
        if child.tag not in (f"{_T}span", f"{_T}s"):
            return None
        words += [" " * int(child.get(f"{_T}c", "1")) if child.tag == f"{_T}s" else child.text or "", child.tail or ""]
    return "".join(words) or None


def _write(paragraph: Paragraph, translation: str) -> None:
    """The paragraph's text, spans, links and points rebuilt from its translation's markup."""
    element = paragraph.element
    element.text = None
    for child in list(element):
        element.remove(child)
    last = None  # the element whose tail the paragraph's own text goes on next

    def append(child) -> None:
        nonlocal last
        child.tail = None
        element.append(child)
        last = child

    for event in events(paragraph, translation, lambda child: child.tag in _SPACING):
        if event[0] == "text":
            _, text, style, link = event
            if link is not None:
                paragraph.links[link][0].text = (paragraph.links[link][0].text or "") + text
            elif style is None and last is None:
                element.text = (element.text or "") + text
            elif style is None:
                last.tail = (last.tail or "") + text
            else:
                span = element.makeelement(f"{_T}span", {f"{_T}style-name": style})
                span.text = text
                append(span)
        elif event[0] == "point":
            append(paragraph.points[event[1]][0])
        else:
            link = paragraph.links[event[1]][0]
            link.text = None
            for inside in list(link):  # (spans: their words are the translation's now)
                link.remove(inside)
            append(link)
