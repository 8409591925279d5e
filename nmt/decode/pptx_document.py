"""PowerPoint presentations in, presentations out (`--input-format pptx`, the default for .pptx
files; lxml, `pip install 'nmt[office]'`): each paragraph of the slides and of their speaker notes
translated whole, its formatting kept (nmt.decode.office_paragraphs: each run's formatting, a
link among them, an element around its words; a line break or a field, such as the slide's
number, put back between them). The text's language (each run's lang) is the target's; every
other file of the presentation (layouts, masters, images, charts) is copied byte for byte, in its
order.
"""

from __future__ import annotations

import io
import re
import zipfile

from nmt.decode.office_paragraphs import DRAWING, Paragraph, ParagraphTexts, read_paragraph, write_paragraph
from nmt.errors import NmtError
from nmt.files import rezipped

_PARTS = re.compile(r"ppt/(?:slides/slide|notesSlides/notesSlide)(\d+)\.xml")  # slides, then their notes
_LANGUAGE_HOLDERS = ("rPr", "endParaRPr", "defRPr")  # DrawingML elements whose lang names the text's language


def _lxml():
    try:
        from lxml import etree
    except ImportError:
        raise NmtError("PowerPoint presentations need lxml: pip install 'nmt[office]'") from None
    return etree


class PptxDocument(ParagraphTexts):
    """A .pptx file read for translation: its `texts` (each paragraph's, as inline markup, slide
    by slide, then the notes) in, the file with their translations out (`write`)."""

    def __init__(self, data: bytes, roots: dict, paragraphs: list[Paragraph]):
        self.data, self.roots, self.paragraphs = data, roots, paragraphs

    @classmethod
    def read(cls, data: bytes, name: str) -> "PptxDocument":
        etree = _lxml()
        try:
            package = zipfile.ZipFile(io.BytesIO(data))
            package.getinfo("ppt/presentation.xml")
            names = sorted((n for n in package.namelist() if _PARTS.fullmatch(n)),
                           key=lambda n: ("notesSlide" in n, int(_PARTS.fullmatch(n).group(1))))
            roots = {n: etree.fromstring(package.read(n)) for n in names}
        except (zipfile.BadZipFile, KeyError, etree.XMLSyntaxError) as e:
            raise NmtError(f"{name}: not a PowerPoint presentation (.pptx): {e}") from None
        elements = [p for root in roots.values() for p in root.iter(DRAWING("p"))]
        return cls(data, roots, [p for p in (read_paragraph(e, DRAWING) for e in elements) if p is not None])

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The presentation with each paragraph's translation in its place, and its text's
        language the target's (`language`, where given)."""
        from lxml import etree

        from nmt.data.languages import language_tag

        for paragraph, translation in zip(self.paragraphs, translations):
            write_paragraph(paragraph, translation)
        for root in self.roots.values() if language else ():
            for element in root.iter(*map(DRAWING, _LANGUAGE_HOLDERS)):
                if element.get("lang") is not None:
                    element.set("lang", language_tag(language))
        return rezipped(self.data, {name: etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
                                    for name, root in self.roots.items()})
