"""PDF files in and out (`--input-format pdf`, the default for .pdf files; pdfminer.six, pypdf and
reportlab: `pip install 'nmt[pdf]'`): each paragraph of each page translated whole and drawn
back in its place.

A PDF holds no paragraphs, only glyphs at positions. pdfminer.six groups them into lines and the
lines into boxes. A box is cut into paragraphs where the font size, the line spacing or the
boldness of whole lines changes, where a line opens with a bullet or a number, and after a line
that ends short of the box's right edge by more than the next line's first word (a sentence's
end, or before a capital); a box that goes on just below the one before, where that one ends no
sentence, continues its paragraph (a list item's later lines) when it begins in lower case or the
line above had no room for its first word.
A paragraph whose last line ends no sentence at the foot of a column runs on into the first one of
the next column or page where that one begins in lower case (or the line ended in a comma or a
hyphen): the two are one passage, translated whole, its words shared between them by their source
lengths. Running heads and feet (the same words at the same height on three pages or more) stand
apart. A line's last word broken by a hyphen is joined again. In a paragraph's markup the glyphs in its
most used font style are plain text, and each other style (bold, italic, a monospaced word, by
the font's name) an element around its words (<f1>…</f1>), so that the translation carries the
style on the words aligned to them.

Writing, pypdf removes every page's text and reportlab draws it again over the rest of the page
(pictures, drawings, links and form fields stay as they were):
- each translation from its paragraph's first baseline down, wrapped in its column (a line alone
  centred or set right as it was), at the paragraph's size, condensed as much as its own font
  was narrower than ours; where it would run into what lies below it, condensed a little more,
  then smaller (to 60 % of its size);
- everything else (text without a letter such as page numbers, code in a monospaced font alone,
  text that is not upright) glyph by glyph where it was.
Text in pictures (a scan) is not read. A glyph whose font gives no Unicode for it cannot be drawn
again: it is left out, and a warning counts them.

The font is DejaVu (sans, serif and mono, as the original's name says) where the system or
matplotlib has it, else reportlab's Vera (Western European letters only); `decode.pdf_font`
names a TrueType font for other scripts.
"""

from __future__ import annotations

import html
import io
import re
import statistics
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from nmt.errors import NmtError

MISSING_EXTRA = "PDF files need pdfminer.six, pypdf and reportlab: pip install 'nmt[pdf]'"
SMALLEST = 0.6  # the least a paragraph's size is scaled to make its translation fit
_BULLET = re.compile(r"\s*(?:[•◦▪▫‣⁃●○■□–—*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s")
_SENTENCE_END = re.compile(r"[.!?:;…][\"'”’»)\]]*\s*$")
_TAG = re.compile(r"<(/?)f(\d+)>")
_ROMAN_NUMERAL = re.compile(r"\s*[ivxlc]{1,6}\.?\s*", re.I)  # a page's number in a book's front matter


@dataclass
class Glyph:
    """A character as the page drew it: where (`matrix`, pdfminer's text rendering matrix, before
    the font size), how large (`fontsize`), stretched (`scaling`, raised by `rise`), in which
    colour (a gray, RGB or CMYK tuple; None: black) and style."""
    text: str
    matrix: tuple
    fontsize: float
    scaling: float
    rise: float
    colour: tuple | None
    style: tuple  # (family, bold, italic): font_style
    size: float  # its height on the page
    width: float  # its advance on the page
    upright: bool
    unmapped: bool = False  # its font gives no Unicode text for it: left out


@dataclass
class Line:
    x0: float
    x1: float
    top: float
    baseline: float
    pieces: list  # Glyph, or " " where pdfminer found a space between glyphs
    right: float  # the right edge of pdfminer's box that holds it

    @property
    def glyphs(self) -> list[Glyph]:
        return [p for p in self.pieces if isinstance(p, Glyph)]

    @property
    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text for p in self.pieces).strip()

    @property
    def size(self) -> float:
        return statistics.median(g.size for g in self.glyphs)

    @property
    def first_word(self) -> float:
        """The width of its first word."""
        width = 0.0
        for piece in self.pieces:
            if not isinstance(piece, Glyph) or not piece.text.strip():
                break
            width += piece.width
        return width

    @property
    def all_bold(self) -> bool:
        return all(g.style[1] for g in self.glyphs if g.text.strip())


@dataclass
class Paragraph:
    page: int
    lines: list[Line]
    column: tuple = (0.0, 0.0, 0.0, 0.0)  # its column's edges, how far right it may reach, the page's middle (_column)
    styles: list = field(default_factory=list)  # font_style of its passage's plain text, then of each <fN>
    room: float = 0.0  # how far below its last baseline its translation may run

    @property
    def left(self) -> float:
        return min(line.x0 for line in self.lines)

    @property
    def align(self) -> str:
        """"left"; or, for a line alone, "centre" or "right" where it sits so in its column."""
        if len(self.lines) > 1:
            return "left"
        (x0, x1, _, middle), line = self.column, self.lines[0]
        centre, near = (line.x0 + line.x1) / 2, max(3.0, 0.02 * (x1 - x0))
        if abs(centre - middle) < 3 and (x0 + 2 < line.x0 or line.x1 - line.x0 < 0.6 * middle):
            return "centre"  # on the page
        if x0 + 2 < line.x0 and abs(centre - (x0 + x1) / 2) < near:
            return "centre"  # over its column (a chart's title over its axes)
        return "right" if line.x0 - x0 > 0.3 * (x1 - x0) and x1 - line.x1 < 2 else "left"

    @property
    def size(self) -> float:
        return statistics.median(g.size for line in self.lines for g in line.glyphs)

    @property
    def pitch(self) -> float:
        """The distance between its baselines."""
        steps = [a.baseline - b.baseline for a, b in zip(self.lines, self.lines[1:])]
        return statistics.median(steps) if steps and min(steps) > 0 else 1.2 * self.size

    @property
    def colour(self) -> tuple | None:
        return Counter(g.colour for line in self.lines for g in line.glyphs).most_common(1)[0][0]


@dataclass
class Passage:
    """A paragraph as it is translated: one Paragraph, or one whose last line ends no sentence at the
    foot of a column, and the paragraphs it runs on into at the head of the next column or page
    (its `parts`, in order)."""
    parts: list[Paragraph]
    styles: list = field(default_factory=list)  # font_style of its plain text, then of each <fN>
    text: str = ""  # as translated: inline markup

    @property
    def lines(self) -> list[Line]:
        return [line for part in self.parts for line in part.lines]


class PdfDocument:
    """A .pdf file read for translation: its `texts` (each passage's, as inline markup) in, the
    file with their translations drawn in their places out (`write`)."""

    def __init__(self, data: bytes, pages: list, passages: list[Passage], kept: list[list[Glyph]],
                 unmapped: int = 0, font: str | None = None):
        self.data, self.pages, self.passages, self.kept, self.font = data, pages, passages, kept, font
        self.paragraphs = [part for passage in passages for part in passage.parts]
        self.unmapped = unmapped  # glyphs left out: their fonts give no Unicode text for them
        self.missing: list[str] = []  # characters written that the fonts drawn with lack

    @property
    def warnings(self) -> list[str]:
        """What the reader left out and (once written) what the font could not draw."""
        said = [f"{self.unmapped} glyphs have no Unicode text in their fonts: left out"] if self.unmapped else []
        if self.missing:
            said.append(f"the font has no glyph for {''.join(self.missing[:20])!r}"
                        f"{f' (and {len(self.missing) - 20} more)' if len(self.missing) > 20 else ''}: "
                        "--set decode.pdf_font=FONT.ttf names one that has them")
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
            layouts = _layouts(data)
        except PDFPasswordIncorrect:
            raise NmtError(f"{name}: the PDF is protected by a password") from None
        except (PDFSyntaxError, PSException, ValueError, KeyError, TypeError) as e:
            raise NmtError(f"{name}: not a PDF file that can be read ({e or type(e).__name__})") from None
        pages, paragraphs, kept = [], [], []
        for index, layout in enumerate(layouts):
            pages.append(layout.bbox)
            page_paragraphs, page_kept = _page_paragraphs(index, layout)
            paragraphs += page_paragraphs
            kept.append(page_kept)
        if not paragraphs:
            raise NmtError(f"{name}: no text to translate (a scanned PDF needs text recognition first)")
        passages = _passages(paragraphs)
        for passage in passages:
            passage.styles, passage.text = _markup(passage.lines)
            for part in passage.parts:
                part.styles = passage.styles
        _measure_room(paragraphs, kept)
        unmapped = sum(g.unmapped for glyphs in kept for g in glyphs)
        unmapped += sum(g.unmapped for p in paragraphs for line in p.lines for g in line.glyphs)
        return cls(data, pages, passages, kept, unmapped, font)

    def write(self, translations: list[str], language: str | None = None) -> bytes:
        """The document with each paragraph's translation drawn in its place, its language (the
        catalog's /Lang) the target's (`language`, where given)."""
        from pypdf import PdfReader, PdfWriter, Transformation
        from pypdf.generic import NameObject, TextStringObject

        from nmt.data.languages import language_tag

        fonts = Fonts.load(self.font)
        overlay = PdfReader(io.BytesIO(self._drawn(translations, fonts)))
        self.missing = sorted(fonts.missing)
        writer = PdfWriter(clone_from=io.BytesIO(self.data))
        writer.remove_text()
        for page, drawn, (x0, y0, _, _) in zip(writer.pages, overlay.pages, self.pages):
            page.merge_transformed_page(drawn, Transformation().translate(x0, y0))
            page.compress_content_streams()  # pypdf leaves the streams it rewrote uncompressed
        if language:
            writer._root_object[NameObject("/Lang")] = TextStringObject(language_tag(language))
        writer.compress_identical_objects()  # each page merged its own copy of the fonts
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()

    def _drawn(self, translations: list[str], fonts: "Fonts") -> bytes:
        """A PDF of the pages' text alone, page for page: the translations and the glyphs kept."""
        from reportlab.pdfgen.canvas import Canvas

        out = io.BytesIO()
        canvas = Canvas(out, pageCompression=1, invariant=True)  # the same bytes each time
        by_page: dict[int, list] = {}
        for passage, translation in zip(self.passages, translations):
            words = _words(translation, passage.styles)
            for part, share in zip(passage.parts, _shares(words, [sum(len(line.text) for line in part.lines)
                                                                  for part in passage.parts])):
                by_page.setdefault(part.page, []).append((part, share))
        for index, (x0, y0, x1, y1) in enumerate(self.pages):
            canvas.setPageSize((x1 - x0, y1 - y0))
            canvas.translate(-x0, -y0)
            for glyph in self.kept[index]:
                _draw_glyph(canvas, glyph, fonts)
            for paragraph, words in by_page.get(index, []):
                _draw_paragraph(canvas, paragraph, words, fonts)
            canvas.showPage()
        canvas.save()
        return out.getvalue()


def _require() -> None:
    try:
        import pdfminer  # noqa: F401
        import pypdf  # noqa: F401
        import reportlab  # noqa: F401
    except ImportError:
        raise NmtError(MISSING_EXTRA) from None


def _layouts(data: bytes) -> list:
    """Each page's layout (pdfminer's LTPage), each glyph an LTChar that also knows its font size,
    horizontal scaling and rise: what drawing it again takes."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    class Aggregator(PDFPageAggregator):
        def render_char(self, matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate):
            advance = super().render_char(matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate)
            glyph = self.cur_item._objs[-1]
            glyph.fontsize, glyph.scaling, glyph.rise = fontsize, scaling, rise
            return advance

    resources = PDFResourceManager()
    device = Aggregator(resources, laparams=LAParams())
    interpreter = PDFPageInterpreter(resources, device)
    layouts = []
    for page in PDFPage.get_pages(io.BytesIO(data)):
        page.rotate = 0  # read where the page's content is drawn, which is where its text is drawn again
        interpreter.process_page(page)
        layouts.append(device.get_result())
    return layouts


def font_style(fontname: str) -> tuple[str, bool, bool]:
    """A font's family ("sans", "serif" or "mono"), boldness and slant, by its name (a subset's
    prefix left out): Helvetica, Times-BoldItalic, NimbusRomNo9L-ReguItal, TeX's CMBX12 or CMTT10."""
    name = fontname.split("+")[-1].lower().replace(" ", "")
    tex = re.match(r"(?:sf)?(cm|lm|ec|tc)[a-z]*\d", name) or name.startswith("lmroman")
    if _MONO.search(name) or (tex and "tt" in name[:6]):
        family = "mono"
    elif "sans" not in name and (_SERIF.search(name) or (tex and not name.startswith(("cmss", "lmsans")))):
        family = "serif"
    else:
        family = "sans"
    bold = bool(_BOLD.search(name) or (tex and re.match(r"[a-z]*(bx|b)\d", name)))
    italic = bool(_ITALIC.search(name) or (tex and re.match(r"cm(ti|sl|mi|bxti|bxsl)", name)))
    return family, bold, italic


_MONO = re.compile(r"mono|courier|consol|code|typewriter|menlo|inconsolata|nimbusmon|fixed")
_SERIF = re.compile(r"times|serif|roman|nimbusrom|georgia|garamond|cambria|minion|palatino|bookman|century|baskerville"
                    r"|libertine|charter|utopia|tinos")
_BOLD = re.compile(r"bold|black|heavy|demi|-medi|[-,]bd\b|bd$")
_ITALIC = re.compile(r"ital|oblique|obli\b|slant|-it\b|-it$")


def _glyph(char) -> Glyph:
    colour = char.graphicstate.ncolor
    if isinstance(colour, (int, float)):
        colour = (colour,)
    if not (isinstance(colour, tuple) and len(colour) in (1, 3, 4) and all(isinstance(v, (int, float)) for v in colour)):
        colour = None  # a pattern, or a colour space of another kind: black
    text = "" if _UNMAPPED.fullmatch(char.get_text()) else char.get_text()
    return Glyph(text, tuple(char.matrix), char.fontsize, char.scaling, char.rise, colour, font_style(char.fontname),
                 size=char.size, width=char.width, upright=char.upright, unmapped=not text)


_UNMAPPED = re.compile(r"\(cid:\d+\)")


def _page_paragraphs(index: int, layout) -> tuple[list[Paragraph], list[Glyph]]:
    """A page's paragraphs to translate, and every other glyph on it, to be drawn as it was: text
    without a letter, text in a monospaced font alone (code), and text that is not upright."""
    from pdfminer.layout import LTAnno, LTChar, LTTextBox, LTTextLine

    paragraphs: list[Paragraph] = []
    kept: list[Glyph] = []
    boxes = [item for item in layout if isinstance(item, LTTextBox)]
    every_line: list[Line] = []
    groups: list[list[Line]] = []
    for box in boxes:
        lines = []
        for item in box:
            if not isinstance(item, LTTextLine):
                continue
            pieces = [_glyph(c) if isinstance(c, LTChar) else " " for c in item
                      if isinstance(c, LTChar) or (isinstance(c, LTAnno) and c.get_text() == " ")]
            glyphs = [p for p in pieces if isinstance(p, Glyph)]
            if glyphs:
                lines.append(Line(item.x0, item.x1, item.y1, statistics.median(g.matrix[5] for g in glyphs), pieces,
                                  right=box.x1))
        every_line += lines
        if any(not g.upright for line in lines for g in line.glyphs):
            kept += [g for line in lines for g in line.glyphs]
            continue
        for number, line in enumerate(lines):
            if groups and (_goes_on(groups[-1], line) if number == 0 else not _starts_paragraph(groups[-1], line)):
                groups[-1].append(line)
            else:
                groups.append([line])
    for group in groups:
        glyphs = [g for line in group for g in line.glyphs]
        text = " ".join(line.text for line in group)
        if (any(c.isalpha() for c in text) and not _ROMAN_NUMERAL.fullmatch(text)
                and not all(g.style[0] == "mono" for g in glyphs)):
            paragraphs.append(Paragraph(index, group))
        else:
            kept += glyphs
    in_boxes = {id(c) for box in boxes for line in box if isinstance(line, LTTextLine) for c in line}
    kept += [_glyph(c) for c in layout_chars(layout) if id(c) not in in_boxes]
    for paragraph in paragraphs:
        paragraph.column = _column(paragraph, every_line, layout.bbox)
    return paragraphs, kept


def _column(paragraph: Paragraph, every_line: list[Line], page: tuple) -> tuple[float, float, float, float]:
    """The left and right edges of the text above and below a paragraph (its column); how far
    right its translation may reach: to the page's margin where no text on the page stands to its
    right (a line alone), else to its column's edge; and the page's middle."""
    left, right = paragraph.left, max(line.x1 for line in paragraph.lines)
    around = [line for line in every_line if line.x0 < right and line.x1 > left]
    column = min(line.x0 for line in around), max(line.x1 for line in around)
    margin = page[2] - (min(line.x0 for line in every_line) - page[0])  # the page's left margin, on the right
    reach = min([margin] + [line.x0 - paragraph.size for line in every_line if line.x0 >= right])
    return column[0], column[1], max(column[1], reach), (page[0] + page[2]) / 2


def layout_chars(item):
    """Every glyph under a layout item (in figures too, which pdfminer leaves out of its boxes)."""
    from pdfminer.layout import LTChar, LTContainer

    if isinstance(item, LTChar):
        yield item
    elif isinstance(item, LTContainer):
        for child in item:
            yield from layout_chars(child)


def _starts_paragraph(group: list[Line], line: Line) -> bool:
    """Whether a line of the box that holds the group's last line begins a paragraph."""
    last = group[-1]
    size = max(last.size, line.size)
    pitch = (group[-2].baseline - last.baseline) if len(group) > 1 else 1.25 * size
    right = last.right
    return (_has_letter(line) != _has_letter(last) and not _ends_sentence_on(last, line)  # a row of numbers apart
            or abs(line.size - last.size) > 0.15 * size
            or last.baseline - line.baseline > max(1.6 * size, pitch + 0.3 * size)
            or last.all_bold != line.all_bold
            or bool(_BULLET.match(line.text))
            or (last.x1 + line.first_word + 0.5 * size < right  # it would have fitted: the line was broken here
                and (bool(_SENTENCE_END.search(last.text)) or not line.text[:1].islower())))


def _has_letter(line: Line) -> bool:
    return any(c.isalpha() for c in line.text)


def _ends_sentence_on(last: Line, line: Line) -> bool:
    """Whether a line without a letter ends the sentence of the line before it ("… the number" / "6.")."""
    return _has_letter(last) and not _SENTENCE_END.search(last.text) and bool(_SENTENCE_END.search(line.text))


def _goes_on(group: list[Line], line: Line) -> bool:
    """Whether the first line of a box goes on with the paragraph the box before it ended (pdfminer
    gives a list item's later lines, indented under its first, a box of their own): it lies just
    below, under it, at its size, and begins in lower case, or the line before ends no sentence and
    had no room for its first word."""
    last = group[-1]
    if not (_has_letter(line) and _has_letter(last) and abs(line.size - last.size) <= 0.15 * last.size and 0 < last.baseline - line.baseline <= 1.6 * last.size
            and line.x0 < last.x1 and line.x1 > last.x0) or _SENTENCE_END.search(last.text):
        return False
    return line.text[:1].islower() or last.x1 + line.first_word + 0.5 * last.size >= max(last.right, line.right)


def _passages(paragraphs: list[Paragraph]) -> list[Passage]:
    """The paragraphs as passages: each that runs on into another (_runs_on_into) joined with it.
    Running heads and feet (_running) are passages of their own and stand in no column."""
    running = _running(paragraphs)
    body = [p for p in paragraphs if id(p) not in running]
    following: dict[int, Paragraph] = {}
    taken: set[int] = set()
    for paragraph in body:
        after = _runs_on_into(paragraph, body)
        if after is not None and id(after) not in taken:
            following[id(paragraph)] = after
            taken.add(id(after))
    passages = []
    for paragraph in paragraphs:
        if id(paragraph) in taken:
            continue
        parts = [paragraph]
        while id(parts[-1]) in following and len(parts) < len(paragraphs):
            parts.append(following[id(parts[-1])])
        passages.append(Passage(parts))
    return passages


def _running(paragraphs: list[Paragraph]) -> set[int]:
    """The paragraphs that stand at about the same height with the same words (numbers aside) on
    three pages or more: running heads and feet."""
    places: dict[tuple, set[int]] = {}
    for paragraph in paragraphs:
        key = (re.sub(r"\d+", "#", " ".join(line.text for line in paragraph.lines)), round(paragraph.lines[0].baseline / 4))
        places.setdefault(key, set()).add(paragraph.page)
    return {id(p) for p in paragraphs
            if len(places[(re.sub(r"\d+", "#", " ".join(line.text for line in p.lines)), round(p.lines[0].baseline / 4))]) >= 3}


def _runs_on_into(paragraph: Paragraph, paragraphs: list[Paragraph]) -> Paragraph | None:
    """The paragraph that `paragraph` runs on into, if any: it is the last of its column and its
    last line (not all bold: a heading) ends in a letter, a comma or a hyphen; the next column's
    first paragraph (to its right on its page, else the leftmost of the next page's) is of its
    size, not bold, and begins in lower case or after a comma or a hyphen."""
    last = paragraph.lines[-1]
    ends = last.text[-1:]
    if not (ends.isalpha() or ends in ",-\u00ad") or last.all_bold or not _last_in_column(paragraph, paragraphs):
        return None  # (a line all in bold is a heading)
    heads = [p for p in paragraphs if p is not paragraph and _first_in_column(p, paragraphs)
             and abs(p.size - paragraph.size) <= 0.15 * paragraph.size and not p.lines[0].all_bold]
    right = max(line.x1 for line in paragraph.lines)
    beside = [p for p in heads if p.page == paragraph.page and p.left >= right - 1]
    over = [p for p in heads if p.page == paragraph.page + 1]
    candidates = sorted(beside, key=lambda p: (p.left, -p.lines[0].baseline)) or sorted(
        over, key=lambda p: (p.left, -p.lines[0].baseline))
    if not candidates or not (candidates[0].lines[0].text[:1].islower() or ends in ",-\u00ad"):
        return None
    return candidates[0]


def _column_neighbours(paragraph: Paragraph, paragraphs: list[Paragraph]) -> list[Paragraph]:
    """The other paragraphs on its page of about its size that share some of its width."""
    left, right = paragraph.left, max(line.x1 for line in paragraph.lines)
    return [p for p in paragraphs if p is not paragraph and p.page == paragraph.page
            and abs(p.size - paragraph.size) <= 0.15 * paragraph.size
            and p.left < right and max(line.x1 for line in p.lines) > left]


def _last_in_column(paragraph: Paragraph, paragraphs: list[Paragraph]) -> bool:
    bottom = paragraph.lines[-1].baseline
    return not any(p.lines[0].baseline < bottom for p in _column_neighbours(paragraph, paragraphs))


def _first_in_column(paragraph: Paragraph, paragraphs: list[Paragraph]) -> bool:
    top = paragraph.lines[0].baseline
    return not any(p.lines[-1].baseline > top for p in _column_neighbours(paragraph, paragraphs))


def _shares(words: list, lengths: list[int]) -> list[list]:
    """A passage's translated words cut into its parts' shares, in proportion to their source
    lengths (between words)."""
    if len(lengths) == 1:
        return [words]
    sizes = [sum(len(text) for _, text in word) + 1 for word in words]
    total, shares, at, used = sum(sizes), [], 0, 0
    for number, length in enumerate(lengths[:-1]):
        wanted = total * sum(lengths[:number + 1]) / sum(lengths)
        start = at
        while at < len(words) and used + sizes[at] / 2 <= wanted:
            used += sizes[at]
            at += 1
        shares.append(words[start:at])
    return [*shares, words[at:]]


def _markup(lines: list[Line]) -> tuple[list, str]:
    """A paragraph's text as inline markup, its lines joined (a hyphen that broke a word at a line's
    end taken out), and the styles: its plain text's, then each <fN> element's."""
    pieces: list[tuple[tuple | None, str]] = []  # (style, text); None: a space
    for number, line in enumerate(lines):
        for piece in line.pieces:
            if isinstance(piece, Glyph):
                if piece.text:
                    pieces.append((piece.style, piece.text))
            elif pieces:
                pieces.append((None, " "))
        if number < len(lines) - 1 and pieces:
            if (len(pieces) > 1 and pieces[-1][1] in "-\u00ad" and pieces[-2][1].isalpha()
                    and lines[number + 1].text[:1].islower()):
                pieces.pop()
            elif pieces[-1][1] != " ":
                pieces.append((None, " "))
    counts = Counter(style for style, text in pieces if style and text.strip())
    styles = [style for style, _ in counts.most_common()]
    text, current = "", 0
    for style, piece in pieces:
        wanted = current if style is None or not piece.strip() else styles.index(style)
        if wanted != current:
            text += (f"</f{current}>" if current else "") + (f"<f{wanted}>" if wanted else "")
            current = wanted
        text += html.escape(piece, quote=False)
    text += f"</f{current}>" if current else ""
    text = re.sub(r"(\s+)(</f\d+>)", r"\2\1", text)  # spaces outside the elements
    return styles, re.sub(r"\s{2,}", " ", text).strip()


def _measure_room(paragraphs: list[Paragraph], kept: list[list[Glyph]]) -> None:
    """Each paragraph's room: how far below its last baseline its translation may run, to most of
    the way to the nearest text below it in its column, or one line where none is."""
    for paragraph in paragraphs:
        (left, right, _, _), bottom = paragraph.column, paragraph.lines[-1].baseline
        tops = [line.top for other in paragraphs if other.page == paragraph.page and other is not paragraph
                for line in other.lines if line.top <= bottom and line.x0 < right and line.x1 > left]
        tops += [g.matrix[5] + g.size for g in kept[paragraph.page]
                 if g.matrix[5] + g.size <= bottom and left <= g.matrix[4] <= right]
        paragraph.room = max(0.0, (bottom - max(tops)) * 0.6) if tops else paragraph.pitch


@dataclass
class Fonts:
    """The TrueType fonts text is drawn with, registered with reportlab, by font_style; and the
    characters drawn that their fonts lack (`missing`)."""
    names: dict
    missing: set = field(default_factory=set)

    @classmethod
    def load(cls, font: str | None = None) -> "Fonts":
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFError, TTFont

        files = {("sans", False, False): font} if font else _default_font_files()
        names = {}
        for style, path in files.items():
            name = f"nmt-{Path(path).stem}-{zlib.crc32(str(path).encode()):08x}"
            if name not in pdfmetrics.getRegisteredFontNames():
                try:
                    pdfmetrics.registerFont(TTFont(name, path))
                except (TTFError, OSError) as e:
                    raise NmtError(f"decode.pdf_font: {path}: not a TrueType font that can be read ({e})") from None
            names[style] = name
        return cls(names)

    def name(self, style: tuple) -> str:
        """The font for a style: the family's, else sans; bold or slanted as near as there is."""
        family, bold, italic = style
        for f, b, i in ((family, bold, italic), (family, bold, False), (family, False, False),
                        ("sans", bold, italic), ("sans", bold, False), ("sans", False, False)):
            if (f, b, i) in self.names:
                return self.names[(f, b, i)]
        return next(iter(self.names.values()))

    def width(self, text: str, style: tuple, size: float) -> float:
        from reportlab.pdfbase.pdfmetrics import stringWidth

        return stringWidth(text, self.name(style), size)

    def drawn(self, text: str, style: tuple) -> str:
        """`text`, noting the characters the style's font has no glyph for."""
        from reportlab.pdfbase.pdfmetrics import getFont

        glyphs = getFont(self.name(style)).face.charToGlyph
        self.missing.update(c for c in text if ord(c) not in glyphs and not c.isspace())
        return text


_DEJAVU = {("sans", False, False): "DejaVuSans.ttf", ("sans", True, False): "DejaVuSans-Bold.ttf",
           ("sans", False, True): "DejaVuSans-Oblique.ttf", ("sans", True, True): "DejaVuSans-BoldOblique.ttf",
           ("serif", False, False): "DejaVuSerif.ttf", ("serif", True, False): "DejaVuSerif-Bold.ttf",
           ("serif", False, True): "DejaVuSerif-Italic.ttf", ("serif", True, True): "DejaVuSerif-BoldItalic.ttf",
           ("mono", False, False): "DejaVuSansMono.ttf", ("mono", True, False): "DejaVuSansMono-Bold.ttf",
           ("mono", False, True): "DejaVuSansMono-Oblique.ttf", ("mono", True, True): "DejaVuSansMono-BoldOblique.ttf"}
_VERA = {("sans", False, False): "Vera.ttf", ("sans", True, False): "VeraBd.ttf", ("sans", False, True): "VeraIt.ttf",
         ("sans", True, True): "VeraBI.ttf"}


def _default_font_files() -> dict:
    """DejaVu from the system's fonts or matplotlib's, else the Vera that reportlab ships."""
    import importlib.util

    import reportlab

    folders = [Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/TTF"), Path("/usr/share/fonts/dejavu"),
               Path("/usr/local/share/fonts"), Path.home() / "Library/Fonts", Path("/Library/Fonts")]
    matplotlib = importlib.util.find_spec("matplotlib")
    if matplotlib and matplotlib.submodule_search_locations:
        folders.append(Path(list(matplotlib.submodule_search_locations)[0]) / "mpl-data/fonts/ttf")
    found = {}
    for folder in folders:
        for style, name in _DEJAVU.items():
            if style not in found and (folder / name).is_file():
                found[style] = str(folder / name)
    if ("sans", False, False) in found:
        return found
    vera = Path(reportlab.__file__).parent / "fonts"
    return {style: str(vera / name) for style, name in _VERA.items()}


def _fill(canvas, colour: tuple | None) -> None:
    if colour is None or len(colour) == 1:
        gray = colour[0] if colour else 0.0
        canvas.setFillColorRGB(gray, gray, gray)
    elif len(colour) == 3:
        canvas.setFillColorRGB(*colour)
    else:
        canvas.setFillColorCMYK(*colour)


def _draw_glyph(canvas, glyph: Glyph, fonts: Fonts) -> None:
    """One glyph where and as it was, in our font."""
    if not glyph.text.strip():
        return
    canvas.saveState()
    _fill(canvas, glyph.colour)
    canvas.transform(*glyph.matrix)
    text = canvas.beginText(0, 0)
    text.setFont(fonts.name(glyph.style), glyph.fontsize)
    text.setHorizScale(glyph.scaling * 100)
    text.setRise(glyph.rise)
    text.textOut(fonts.drawn(glyph.text, glyph.style))
    canvas.drawText(text)
    canvas.restoreState()


def runs(translation: str, styles: list) -> list[tuple[tuple, str]]:
    """A translation's text in runs of one style each: its <fN> elements (those of the paragraph;
    any other tag left out), the rest in the paragraph's own style."""
    plain = styles[0] if styles else ("sans", False, False)
    out, stack, position = [], [], 0
    for match in _TAG.finditer(translation):
        out.append((stack[-1] if stack else plain, translation[position:match.start()]))
        position = match.end()
        number = int(match[2])
        if match[1]:
            if number < len(styles) and styles[number] in stack:
                stack.remove(styles[number])
        elif 0 < number < len(styles):
            stack.append(styles[number])
    out.append((stack[-1] if stack else plain, translation[position:]))
    return [(style, html.unescape(re.sub(r"<[^>]*>", "", text))) for style, text in out if text]


def _words(translation: str, styles: list) -> list[list[tuple]]:
    """A translation's words, each a list of (style, text) runs."""
    words: list = [[]]
    for style, text in runs(translation, styles):
        for number, part in enumerate(re.split(r"\s+", text)):
            if number and words[-1]:
                words.append([])
            if part:
                words[-1].append((style, part))
    return [w for w in words if w]


def _wrapped(words: list[list[tuple]], width: float, first_indent: float, fonts: Fonts, size: float,
             space: float) -> list[list[list[tuple]]]:
    """Words filled into lines of `width` (the first shorter by `first_indent`); a word wider than
    a line has one to itself."""
    lines: list = [[]]
    used = first_indent
    for word in words:
        wide = sum(fonts.width(text, style, size) for style, text in word)
        if lines[-1] and used + space + wide > width:
            lines.append([])
            used = 0.0
        used += (space if lines[-1] else 0.0) + wide
        lines[-1].append(word)
    return lines


def _font_width(paragraph: Paragraph, fonts: Fonts) -> float:
    """How much narrower than ours the paragraph's own font is (ours are often wider): the source
    text's width on the page over its width in our fonts at its size; at most 1, at least 0.75.
    The translation is drawn condensed so much, so that the original text would fill its lines."""
    ours = sum(fonts.width(g.text, g.style, g.size) for line in paragraph.lines for g in line.glyphs)
    theirs = sum(line.x1 - line.x0 for line in paragraph.lines)
    return min(1.0, max(0.75, theirs / ours)) if ours > 0 else 1.0


def _draw_paragraph(canvas, paragraph: Paragraph, words: list[list[tuple]], fonts: Fonts) -> None:
    """A paragraph's translation (its words: _words) in its place: from its first baseline down, in its column (its
    later lines from where its second began), at its size, condensed as its own font was narrower
    (_font_width); where its lines would run into what lies below it, condensed more (to 90 %) and
    then smaller (to SMALLEST of its size). A line alone stays one line down to 80 % of its size."""
    first, lines_after = paragraph.lines[0], paragraph.lines[1:]
    rest = min(line.x0 for line in lines_after) if lines_after else first.x0
    left, _, reach, _ = paragraph.column
    centre = (first.x0 + first.x1) / 2
    width = {"left": reach - rest, "right": first.x1 - left, "centre": 2 * (reach - centre)}[paragraph.align]
    height = len(lines_after) * paragraph.pitch + paragraph.room
    plain = paragraph.styles[0] if paragraph.styles else ("sans", False, False)
    narrower = _font_width(paragraph, fonts)
    # a line alone (a heading, a label) stays one line while it can at 80 % of its size or more
    fits = ([(scale, condensing, 1) for scale, condensing in _FITS if scale >= 0.8] if not lines_after else [])
    for scale, condensing, most in fits + [(scale, condensing, None) for scale, condensing in _FITS]:
        size, pitch, condensed = paragraph.size * scale, paragraph.pitch * scale, narrower * condensing
        space = fonts.width(" ", plain, size)
        lines = _wrapped(words, width / condensed, (first.x0 - rest) / condensed, fonts, size, space)
        if (len(lines) - 1) * pitch <= height + 0.01 and len(lines) <= (most or len(lines)):
            break
    canvas.saveState()
    _fill(canvas, paragraph.colour)
    for number, line in enumerate(lines):
        used = (sum(fonts.width(t, s, size) for word in line for s, t in word) + space * (len(line) - 1)) * condensed
        x = {"left": first.x0 if number == 0 else rest, "right": first.x1 - used,
             "centre": centre - used / 2}[paragraph.align]
        text = canvas.beginText(x, first.baseline - number * pitch)
        text.setHorizScale(condensed * 100)
        for index, word in enumerate(line):
            for style, part in ([(word[0][0], " ")] if index else []) + word:
                text.setFont(fonts.name(style), size)
                text.textOut(fonts.drawn(part, style))
        canvas.drawText(text)
    canvas.restoreState()


# (size, width) scales tried in turn until a translation fits: condensed a little first, then smaller
_FITS = [(1.0, 1.0), (1.0, 0.95), (1.0, 0.9)] + [(s / 100, 0.9) for s in range(95, int(SMALLEST * 100) - 1, -5)]
