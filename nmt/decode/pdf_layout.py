"""A PDF page's text as nmt translates it (nmt.decode.pdf_document): pdfminer.six's glyphs, lines
and boxes made into paragraphs, and the paragraphs into passages.

A box is cut into paragraphs where the font size, the line spacing or the boldness of whole
lines changes, where a line opens with a bullet or a number, and after a line that ends short of
the box's right edge by more than the next line's first word (a sentence's end, or before a
capital); a box that goes on just below the one before, where that one ends no sentence,
continues its paragraph (a list item's later lines) when it begins in lower case or the line
above had no room for its first word. A row of numbers is a unit of its own (a chart's ticks),
unless it ends the sentence above it.

A paragraph whose last line ends no sentence at the foot of a column runs on into the first one
of the next column or page where that one begins in lower case, or the line ended in a comma or
a hyphen, or had no room for the next one's first word: the two are one passage, translated
whole. Running heads and feet (the same words at the same height on three pages or more) stand
apart. A line's last word broken by a hyphen is
joined again. In a passage's markup the glyphs in its most used font style are plain text, and
each other style (bold, italic, a monospaced word, by the font's name) an element around its
words (<f1>…</f1>), so that the translation carries the style on the words aligned to them.
"""

from __future__ import annotations

import html
import io
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

_BULLET = re.compile(r"\s*(?:[•◦▪▫‣⁃●○■□–—*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s")
_SENTENCE_END = re.compile(r"[.!?:;…][\"'”’»)\]]*\s*$")
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
    link: int | None = None  # the link (its number among the document's) whose area holds it


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

    @cached_property
    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text for p in self.pieces).strip()

    @cached_property
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


@dataclass(frozen=True)
class Column:
    """Where a paragraph stands across its page (_column)."""
    left: float = 0.0  # the left edge of the text above and below it
    right: float = 0.0  # and the right edge
    reach: float = 0.0  # how far right its translation may run
    middle: float = 0.0  # the page's middle


@dataclass
class Paragraph:
    page: int
    lines: list[Line]
    column: Column = field(default_factory=Column)
    styles: list = field(default_factory=list)  # its passage's (markup)
    room: float = 0.0  # how far below its last baseline its translation may run

    @cached_property
    def left(self) -> float:
        return min(line.x0 for line in self.lines)

    @cached_property
    def right(self) -> float:
        return max(line.x1 for line in self.lines)

    @property
    def align(self) -> str:
        """"left"; or, for a line alone, "centre" or "right" where it sits so in its column."""
        if len(self.lines) > 1:
            return "left"
        column, line = self.column, self.lines[0]
        centre, near = (line.x0 + line.x1) / 2, max(3.0, 0.02 * (column.right - column.left))
        indented = column.left + 2 < line.x0
        if abs(centre - column.middle) < 3 and (indented or line.x1 - line.x0 < 0.6 * column.middle):
            return "centre"  # on the page
        if indented and abs(centre - (column.left + column.right) / 2) < near:
            return "centre"  # over its column (a chart's title over its axes)
        set_right = line.x0 - column.left > 0.3 * (column.right - column.left) and column.right - line.x1 < 2
        return "right" if set_right else "left"

    @cached_property
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
    styles: list = field(default_factory=list)  # (*font_style, link) of its plain text, then of each <fN>
    text: str = ""  # as translated: inline markup

    @property
    def lines(self) -> list[Line]:
        return [line for part in self.parts for line in part.lines]


def read_layouts(data: bytes) -> list:
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


def page_paragraphs(index: int, layout, links: list[tuple[int, tuple]] = ()) -> tuple[list[Paragraph], list[Glyph]]:
    """A page's paragraphs to translate, and every other glyph on it, to be drawn as it was: text
    without a letter, text in a monospaced font alone (code), and text that is not upright. A glyph
    whose middle lies in one of the page's `links` ((number, area)) is that link's."""
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
            for glyph, char in zip(glyphs, [c for c in item if isinstance(c, LTChar)]):
                middle = ((char.x0 + char.x1) / 2, (char.y0 + char.y1) / 2)
                glyph.link = next((n for n, (x0, y0, x1, y1) in links
                                   if x0 <= middle[0] <= x1 and y0 <= middle[1] <= y1), None)
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


def _column(paragraph: Paragraph, every_line: list[Line], page: tuple) -> Column:
    """The left and right edges of the text above and below a paragraph (its column); how far
    right its translation may reach: to the page's margin where no text on the page stands to its
    right (a line alone), else to its column's edge, and never into text beside its lines (a label
    set right on its line); and the page's middle."""
    left, right = paragraph.left, paragraph.right
    around = [line for line in every_line if line.x0 < right and line.x1 > left]
    column_left, column_right = min(line.x0 for line in around), max(line.x1 for line in around)
    margin = page[2] - (min(line.x0 for line in every_line) - page[0])  # the page's left margin, on the right
    reach = max(column_right, min([margin] + [line.x0 - paragraph.size for line in every_line if line.x0 >= right]))
    top, bottom = paragraph.lines[0].top, paragraph.lines[-1].baseline
    beside = [line.x0 for line in every_line if line.x0 >= right and line.baseline <= top and line.top >= bottom]
    reach = min([reach] + [x - paragraph.size / 2 for x in beside])
    return Column(column_left, column_right, reach, (page[0] + page[2]) / 2)


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
    alike = _has_letter(line) and _has_letter(last) and abs(line.size - last.size) <= 0.15 * last.size
    below = 0 < last.baseline - line.baseline <= 1.6 * last.size and line.x0 < last.x1 and line.x1 > last.x0
    if not (alike and below) or _SENTENCE_END.search(last.text):
        return False
    return line.text[:1].islower() or last.x1 + line.first_word + 0.5 * last.size >= max(last.right, line.right)


def passages_of(paragraphs: list[Paragraph]) -> list[Passage]:
    """The paragraphs as passages: each that runs on into another (_runs_on_into) joined with it.
    Running heads and feet (_running) are passages of their own and stand in no column."""
    running = _running(paragraphs)
    pages: dict[int, list[Paragraph]] = {}
    for paragraph in paragraphs:
        if id(paragraph) not in running:
            pages.setdefault(paragraph.page, []).append(paragraph)
    heads = {page: [p for p in body if _first_in_column(p, body) and not p.lines[0].all_bold]
             for page, body in pages.items()}
    following: dict[int, Paragraph] = {}
    taken: set[int] = set()
    for page, body in pages.items():
        for paragraph in body:
            if not _last_in_column(paragraph, body):
                continue
            after = _runs_on_into(paragraph, heads.get(page, []), heads.get(page + 1, []))
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
    def place(paragraph: Paragraph) -> tuple:
        return re.sub(r"\d+", "#", " ".join(line.text for line in paragraph.lines)), round(paragraph.lines[0].baseline / 4)
    places = {id(paragraph): place(paragraph) for paragraph in paragraphs}
    pages: dict[tuple, set[int]] = {}
    for paragraph in paragraphs:
        pages.setdefault(places[id(paragraph)], set()).add(paragraph.page)
    return {id(p) for p in paragraphs if len(pages[places[id(p)]]) >= 3}


def _runs_on_into(paragraph: Paragraph, heads: list[Paragraph], next_heads: list[Paragraph]) -> Paragraph | None:
    """The paragraph that `paragraph`, the last of its column, runs on into, if any: its last line
    (not all bold: a heading) ends in a letter, a comma or a hyphen; the next column's first
    paragraph (among the `heads` of columns on its page, to its right; else the leftmost of the next
    page's) is of its size and begins in lower case, after a comma or a hyphen, or with a word the
    last line had no room for (a German noun)."""
    last = paragraph.lines[-1]
    ends = last.text[-1:]
    if not (ends.isalpha() or ends in ",-\u00ad") or last.all_bold:
        return None
    def order(p: Paragraph) -> tuple:
        return p.left, -p.lines[0].baseline
    alike = [p for p in heads + next_heads if p is not paragraph and abs(p.size - paragraph.size) <= 0.15 * paragraph.size]
    beside = sorted((p for p in alike if p.page == paragraph.page and p.left >= paragraph.right - 1), key=order)
    candidates = beside or sorted((p for p in alike if p.page != paragraph.page), key=order)
    if not candidates:
        return None
    head = candidates[0].lines[0]
    no_room = last.x1 + head.first_word + 0.5 * paragraph.size >= paragraph.column.right  # for the next word
    return candidates[0] if head.text[:1].islower() or ends in ",-\u00ad" or no_room else None


def _column_neighbours(paragraph: Paragraph, paragraphs: list[Paragraph]) -> list[Paragraph]:
    """The other paragraphs (of its page) of about its size that share some of its width."""
    return [p for p in paragraphs if p is not paragraph and abs(p.size - paragraph.size) <= 0.15 * paragraph.size
            and p.left < paragraph.right and p.right > paragraph.left]


def _last_in_column(paragraph: Paragraph, paragraphs: list[Paragraph]) -> bool:
    bottom = paragraph.lines[-1].baseline
    return not any(p.lines[0].baseline < bottom for p in _column_neighbours(paragraph, paragraphs))


def _first_in_column(paragraph: Paragraph, paragraphs: list[Paragraph]) -> bool:
    top = paragraph.lines[0].baseline
    return not any(p.lines[-1].baseline > top for p in _column_neighbours(paragraph, paragraphs))


def markup(lines: list[Line]) -> tuple[list, str]:
    """A paragraph's text as inline markup, its lines joined (a hyphen that broke a word at a line's
    end taken out), and the styles: its plain text's, then each <fN> element's, each a font_style
    and the link its words are (None: none), so that a link follows its words too."""
    pieces: list[tuple[tuple | None, str]] = []  # (style, text); None: a space
    for number, line in enumerate(lines):
        for piece in line.pieces:
            if isinstance(piece, Glyph):
                if piece.text:
                    pieces.append(((*piece.style, piece.link), piece.text))
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


def measure_room(paragraphs: list[Paragraph], kept: list[list[Glyph]]) -> None:
    """Each paragraph's room: how far below its last baseline its translation may run, to most of
    the way to the nearest text below it in its column, or one line where none is."""
    pages: dict[int, list[Paragraph]] = {}
    for paragraph in paragraphs:
        pages.setdefault(paragraph.page, []).append(paragraph)
    for paragraph in paragraphs:
        left, right, bottom = paragraph.column.left, paragraph.column.right, paragraph.lines[-1].baseline
        tops = [line.top for other in pages[paragraph.page] if other is not paragraph
                for line in other.lines if line.top <= bottom and line.x0 < right and line.x1 > left]
        tops += [g.matrix[5] + g.size for g in kept[paragraph.page]
                 if g.matrix[5] + g.size <= bottom and left <= g.matrix[4] <= right]
        paragraph.room = max(0.0, (bottom - max(tops)) * 0.6) if tops else paragraph.pitch
