"""Word documents in, Word documents out (`--input-format docx`, the default for .docx files;
python-docx, `pip install 'nmt[office]'`): each paragraph translated whole, its formatting kept.

Each paragraph of the body, its tables and its sections' headers and footers, and of the
footnotes, endnotes and comments, is read as inline markup of its formattings, links and the
things between its words (nmt.decode.office_paragraphs), translated, and written back as runs in
those formattings. A paragraph without a letter is left as it is; every w:lang names the target.
"""

from __future__ import annotations

import io
import zipfile

from nmt.decode.office_paragraphs import WORD, Paragraph, ParagraphTexts, read_paragraph, write_paragraph
from nmt.errors import NmtError

_W = WORD.ns
_NOTES = ("footnotes+xml", "endnotes+xml", "comments+xml")  # the ends of those parts' content types


def _docx():
    try:
        import docx
    except ImportError:
        raise NmtError("Word documents need python-docx: pip install 'nmt[office]'") from None
    return docx


class DocxDocument(ParagraphTexts):
    """A .docx file read for translation: its `texts` (each paragraph's, as inline markup) in, the
    file with their translations out (`write`)."""

    def __init__(self, document, paragraphs: list[Paragraph], notes: list):
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
        paragraphs = [p for p in (read_paragraph(element, WORD) for element in elements) if p is not None]
        return cls(document, paragraphs, notes)

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The document with each paragraph's translation in its place, its language (each
        style's and run's w:lang, where set) the target's, where `language` is given."""
        from lxml import etree

        for paragraph, translation in zip(self.paragraphs, translations):
            write_paragraph(paragraph, translation)
        if language:
            _set_language(self.document, language)
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


def _notes(document) -> list:
    """(part, XML root) of each footnotes, endnotes and comments part of the document."""
    from lxml import etree  # (python-docx's)

    found = []
    for part in document.part.package.iter_parts():
        if part.content_type.endswith(_NOTES) and "wordprocessingml" in part.content_type:
            found.append((part, part.element if hasattr(part, "element") else etree.fromstring(part.blob)))
    return found


def _set_language(document, language: str) -> None:
    """Every w:lang's w:val (the language of the text, for spelling and hyphenation) the target's."""
    from nmt.data.languages import language_tag

    tag = language_tag(language)
    parts = [document.element, document.styles.element]
    for part in parts:
        for lang in part.iter(f"{_W}lang"):
            if lang.get(f"{_W}val") is not None:
                lang.set(f"{_W}val", tag)
