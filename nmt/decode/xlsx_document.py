"""Excel workbooks in, workbooks out (`--input-format xlsx`, the default for .xlsx files; lxml,
`pip install 'nmt[office]'`): the text of each cell (the shared strings, and strings written in
the sheets themselves) and of each comment translated whole, its rich text's formatting kept
(nmt.decode.office_paragraphs: each run's formatting an element around its words). A string used
by several cells is translated once for all of them. Numbers, dates, formulas, sheet names (which
formulas refer to), charts and every other file of the workbook are copied byte for byte, in
their order; a cell that holds no letter is left as it is.
"""

from __future__ import annotations

import io
import re
import zipfile

from nmt.decode.office_paragraphs import SPREADSHEET, Paragraph, ParagraphTexts, read_paragraph, write_paragraph
from nmt.errors import NmtError
from nmt.files import rezipped

# where a workbook's text is: its shared strings, the sheets' inline strings, the comments
_PARTS = re.compile(r"xl/(?:sharedStrings|worksheets/sheet\d+|comments\d*)\.xml")
_HOLDERS = ("si", "is", "text")  # a shared string, an inline string, a comment's text: rich text each


class XlsxDocument(ParagraphTexts):
    """An .xlsx file read for translation: its `texts` (each string's, as inline markup) in, the
    workbook with their translations out (`write`)."""

    def __init__(self, data: bytes, roots: dict, paragraphs: list[Paragraph]):
        self.data, self.roots, self.paragraphs = data, roots, paragraphs

    @classmethod
    def read(cls, data: bytes, name: str) -> "XlsxDocument":
        try:
            from lxml import etree
        except ImportError:
            raise NmtError("Excel workbooks need lxml: pip install 'nmt[office]'") from None
        try:
            package = zipfile.ZipFile(io.BytesIO(data))
            package.getinfo("xl/workbook.xml")
            roots = {n: etree.fromstring(package.read(n)) for n in package.namelist() if _PARTS.fullmatch(n)}
        except (zipfile.BadZipFile, KeyError, etree.XMLSyntaxError) as e:
            raise NmtError(f"{name}: not an Excel workbook (.xlsx): {e}") from None
        paragraphs = []
        for root in roots.values():
            for holder in root.iter(*map(SPREADSHEET, _HOLDERS)):
                _runs_of_plain_text(holder)
                if (paragraph := read_paragraph(holder, SPREADSHEET)) is not None:
                    paragraphs.append(paragraph)
        return cls(data, roots, paragraphs)

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The workbook with each string's translation in its place (a part without one, such as a
        sheet of numbers, as it was, byte for byte)."""
        from lxml import etree

        for paragraph, translation in zip(self.paragraphs, translations):
            write_paragraph(paragraph, translation)
        translated = {id(paragraph.element.getroottree().getroot()) for paragraph in self.paragraphs}
        return rezipped(self.data, {name: etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
                                    for name, root in self.roots.items() if id(root) in translated})


def _runs_of_plain_text(holder) -> None:
    """A string of plain text (its text in a t of its own, not in runs) given as one run without
    formatting, as rich text writes it: what office_paragraphs reads. One without a letter stays."""
    plain = holder.find(SPREADSHEET("t"))
    if plain is None or not any(c.isalpha() for c in plain.text or ""):
        return
    run = holder.makeelement(SPREADSHEET("r"), {})
    plain.addprevious(run)
    run.append(plain)
