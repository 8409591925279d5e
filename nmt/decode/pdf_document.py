"""PDF files in and out (`--input-format pdf`, the default for .pdf files; pdfminer.six, pypdf and
reportlab: `pip install 'nmt[pdf]'`): each paragraph translated whole and drawn back in its place.

A PDF holds no paragraphs, only glyphs at positions. nmt.decode.pdf_layout makes them into
paragraphs (a paragraph that runs on into the next column or page is one passage) with their
bold, italic and monospaced words as inline markup. Writing, pypdf removes every page's text,
and nmt.decode.pdf_drawing draws it again with reportlab over the rest of the page (pictures,
drawings and form fields stay as they were): each translation in its paragraph's place,
everything else (page numbers, code, text that is not upright) glyph by glyph where it was. A
link's words are an element of the markup, and its area is moved onto the words the translation
puts in it. The catalog's /Lang names the target language.

Text in pictures (a scan) is not read. A glyph whose font gives no Unicode text cannot be drawn
again: it is left out, and a warning counts them, as it names the characters the font drawn
with lacks (`decode.pdf_font` names another).
"""

from __future__ import annotations

import io
import re

from nmt.decode.pdf_drawing import Fonts, draw_glyph, draw_paragraph, shares, words_of
from nmt.decode.pdf_layout import Glyph, Passage, markup, measure_room, page_paragraphs, passages_of, read_layouts
from nmt.errors import NmtError

MISSING_EXTRA = "PDF files need pdfminer.six, pypdf and reportlab: pip install 'nmt[pdf]'"


class PdfDocument:
    """A .pdf file read for translation: its `texts` (each passage's, as inline markup) in, the
    file with their translations drawn in their places out (`write`)."""

    def __init__(self, data: bytes, pages: list, passages: list[Passage], kept: list[list[Glyph]],
                 unmapped: int = 0, font: str | None = None, name: str = "<pdf>", links: list[tuple] = ()):
        self.data, self.pages, self.passages, self.kept, self.font = data, pages, passages, kept, font
        self.name = name
        self.links = list(links)  # each link annotation: (its page, its place in the page's /Annots, its area)
        self.paragraphs = [part for passage in passages for part in passage.parts]
        self.unmapped = unmapped  # glyphs left out: their fonts give no Unicode text for them
        self.missing: list[str] = []  # characters written that the fonts drawn with lack
        self.unshaped = False  # whether text was written in a script drawn as it would not be read

    @property
    def warnings(self) -> list[str]:
        """What the reader left out and (once written) what the font could not draw."""
        said = [f"{self.unmapped} glyphs have no Unicode text in their fonts: left out"] if self.unmapped else []
        if self.missing:
            said.append(f"the font has no glyph for {''.join(self.missing[:20])!r}"
                        f"{f' (and {len(self.missing) - 20} more)' if len(self.missing) > 20 else ''}: "
                        "--set decode.pdf_font=FONT.ttf names one that has them")
        if self.unshaped:
            said.append("text in a right-to-left script, or one whose letters join (Arabic, Hebrew, Devanagari, ...), "
                        "is drawn letter by letter from the left and will not read right: translate its text instead")
        return said

    @property
    def texts(self) -> list[str]:
        return [p.text for p in self.passages]

    @property
    def numbers(self) -> list[int]:
        """Each text's page (where it begins), counted from 1 (for warnings)."""
        return [p.parts[0].page + 1 for p in self.passages]

    @classmethod
    def read(cls, data: bytes, name: str, font: str | None = None) -> "PdfDocument":
        """`font`: a TrueType font (.ttf) to draw the translations in (decode.pdf_font)."""
        _require()
        if font:
            Fonts.load(font)  # an unreadable font is an error before anything is translated
        from pdfminer.pdfdocument import PDFPasswordIncorrect
        from pdfminer.pdfparser import PDFSyntaxError
        from pdfminer.psexceptions import PSException

        try:
            layouts = read_layouts(data)
        except PDFPasswordIncorrect:
            raise NmtError(f"{name}: the PDF is protected by a password") from None
        except (PDFSyntaxError, PSException, ValueError, KeyError, TypeError) as e:
            raise NmtError(f"{name}: not a PDF file that can be read ({e or type(e).__name__})") from None
        links = _links(data)
        pages, paragraphs, kept = [], [], []
        for index, layout in enumerate(layouts):
            pages.append(layout.bbox)
            found, page_kept = page_paragraphs(index, layout, [(n, area) for n, (page, _, area) in enumerate(links)
                                                               if page == index])
            paragraphs += found
            kept.append(page_kept)
        if not paragraphs:
            raise NmtError(f"{name}: no text to translate (a scanned PDF needs text recognition first)")
        passages = passages_of(paragraphs)
        for passage in passages:
            passage.styles, passage.text = markup(passage.lines)
            for part in passage.parts:
                part.styles = passage.styles
        measure_room(paragraphs, kept)
        unmapped = sum(g.unmapped for glyphs in kept for g in glyphs)
        unmapped += sum(g.unmapped for p in paragraphs for line in p.lines for g in line.glyphs)
        return cls(data, pages, passages, kept, unmapped, font, name, links)

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The document with each paragraph's translation drawn in its place, its language (the
        catalog's /Lang) the target's (`language`, where given)."""
        from pypdf import PdfReader, PdfWriter
        from pypdf.errors import PyPdfError
        from pypdf.generic import NameObject, TextStringObject

        from nmt.data.languages import language_tag

        fonts = Fonts.load(self.font)
        link_areas: dict[int, list[tuple]] = {}  # each link's words, as drawn
        overlay = PdfReader(io.BytesIO(self._drawn(translations, fonts, link_areas)))
        self.missing, self.unshaped = sorted(fonts.missing), bool(fonts.unshaped)
        try:
            writer = PdfWriter(clone_from=io.BytesIO(self.data))
            writer.remove_text()
        except (PyPdfError, ValueError, KeyError, TypeError) as e:  # (pdfminer read what pypdf cannot)
            raise NmtError(f"{self.name}: a PDF that cannot be written again ({e or type(e).__name__})") from None
        for page, drawn, box in zip(writer.pages, overlay.pages, self.pages):
            page.compress_content_streams()  # pypdf leaves the streams it rewrote uncompressed
            _draw_over(writer, page, drawn, box)
        _move_links(writer, self.links, link_areas)
        if language:
            writer._root_object[NameObject("/Lang")] = TextStringObject(language_tag(language))
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()

    def _drawn(self, translations: list[str], fonts: Fonts, link_areas: dict[int, list[tuple]]) -> bytes:
        """A PDF of the pages' text alone, page for page: the translations and the glyphs kept; the
        area of each word drawn in a link's style added to `link_areas`."""
        from reportlab.pdfgen.canvas import Canvas

        out = io.BytesIO()
        canvas = Canvas(out, pageCompression=1, invariant=True)  # the same bytes each time
        by_page: dict[int, list] = {}
        for passage, translation in zip(self.passages, translations):
            words = words_of(translation, passage.styles)
            for part, share in zip(passage.parts, shares(words, [sum(len(line.text) for line in part.lines)
                                                                  for part in passage.parts])):
                by_page.setdefault(part.page, []).append((part, share))
        for index, (x0, y0, x1, y1) in enumerate(self.pages):
            canvas.setPageSize((x1 - x0, y1 - y0))
            canvas.translate(-x0, -y0)
            for glyph in self.kept[index]:
                draw_glyph(canvas, glyph, fonts)
            for paragraph, words in by_page.get(index, []):
                draw_paragraph(canvas, paragraph, words, fonts, link_areas)
            canvas.showPage()
        canvas.save()
        return out.getvalue()


def _links(data: bytes) -> list[tuple]:
    """The document's link annotations: (page, place in its /Annots, area (x0, y0, x1, y1)); none
    where pypdf cannot read the file (writing will say so)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        found = []
        for page, sheet in enumerate(PdfReader(io.BytesIO(data)).pages):
            for place, annotation in enumerate(sheet.get("/Annots") or []):
                annotation = annotation.get_object()
                if annotation.get("/Subtype") == "/Link" and len(annotation.get("/Rect", [])) == 4:
                    x0, y0, x1, y1 = (float(v) for v in annotation["/Rect"])
                    found.append((page, place, (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))))
        return found
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError):
        return []


def _move_links(writer, links: list[tuple], areas: dict[int, list[tuple]]) -> None:
    """Each link annotation moved onto the words its translation put in its style: its /Rect the
    area around them, its /QuadPoints each word's. A link whose words the translation lost stays."""
    from pypdf.generic import ArrayObject, FloatObject, NameObject

    for number, (page, place, _) in enumerate(links):
        if not areas.get(number):
            continue
        annotation = writer.pages[page]["/Annots"][place].get_object()
        boxes = areas[number]
        rect = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
        annotation[NameObject("/Rect")] = ArrayObject([FloatObject(round(v, 2)) for v in rect])
        quads = [v for x0, y0, x1, y1 in boxes for v in (x0, y1, x1, y1, x0, y0, x1, y0)]
        annotation[NameObject("/QuadPoints")] = ArrayObject([FloatObject(round(v, 2)) for v in quads])


def _draw_over(writer, page, drawn, box: tuple) -> None:
    """`drawn` (a page of reportlab's) drawn last on `page`: its content stream added to the page's,
    its resources (fonts) to the page's under names of their own. Neither page's content is parsed
    (pypdf's merge would, at a cost that grows with every word drawn)."""
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject

    content = drawn.get_contents().get_data()
    if "/Resources" not in page:  # (inherited from the page tree: made the page's own)
        page[NameObject("/Resources")] = (page.get_inherited("/Resources") or DictionaryObject()).clone(writer)
    resources = page["/Resources"].get_object()
    for kind, named in drawn["/Resources"].get_object().items():
        if not isinstance(named.get_object(), DictionaryObject):
            continue  # (a /ProcSet)
        if kind not in resources:
            resources[NameObject(kind)] = DictionaryObject()
        ours = resources[kind].get_object()
        for name, value in named.get_object().items():
            new = next(f"/Nmt{n}{name[1:]}" for n in range(len(ours) + 1) if f"/Nmt{n}{name[1:]}" not in ours)
            ours[NameObject(new)] = value.clone(writer) if hasattr(value, "clone") else value
            content = re.sub(re.escape(name.encode()) + rb"(?=[\s/\[\]<>(){}%])", new.encode(), content)
    x0, y0 = box[:2]
    before, after = DecodedStreamObject(), DecodedStreamObject()
    before.set_data(b"q\n")  # the page's own drawing, its graphics state undone before the text
    after.set_data(b"\nQ\nq 1 0 0 1 %g %g cm\n" % (x0, y0) + content + b"\nQ\n")
    contents = page.get("/Contents")
    contents = list(contents.get_object()) if isinstance(contents and contents.get_object(), ArrayObject) else (
        [contents] if contents is not None else [])
    page[NameObject("/Contents")] = ArrayObject([writer._add_object(before), *contents,
                                                 writer._add_object(after.flate_encode())])


def _require() -> None:
    try:
        import pdfminer  # noqa: F401
        import pypdf  # noqa: F401
        import reportlab  # noqa: F401
    except ImportError:
        raise NmtError(MISSING_EXTRA) from None
