"""Drawing a PDF page's text again (nmt.decode.pdf_document), with reportlab: each translation
from its paragraph's first baseline down, wrapped in its column (a line alone centred or set right
as it was), at the paragraph's size, condensed as much as its own font was narrower than ours;
where it would run into what lies below it, condensed a little more, then smaller (to SMALLEST of
its size); every other glyph where it was. A passage over several paragraphs shares its
translation's words between them by their source lengths.

The font is DejaVu (sans, serif and mono, as the original's name says) where the system or
matplotlib has it, else reportlab's Vera (Western European letters only), or the TrueType font
named by decode.pdf_font.
"""

from __future__ import annotations

import html
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from nmt.decode.pdf_layout import Glyph, Paragraph
from nmt.errors import NmtError

SMALLEST = 0.6  # the least a paragraph's size is scaled to make its translation fit
_TAG = re.compile(r"<(/?)f(\d+)>")


@dataclass
class Fonts:
    """The TrueType fonts text is drawn with, registered with reportlab, by font_style; and the
    characters drawn that their fonts lack (`missing`)."""
    names: dict
    missing: set = field(default_factory=set)
    unshaped: set = field(default_factory=set)

    @classmethod
    def load(cls, font: str | None = None) -> "Fonts":
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFError, TTFont

        files = {("sans", False, False): font} if font else default_font_files()
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
        """The font for a style (a font_style, maybe with more after it): the family's, else sans;
        bold or slanted as near as there is."""
        family, bold, italic = style[:3]
        for f, b, i in ((family, bold, italic), (family, bold, False), (family, False, False),
                        ("sans", bold, italic), ("sans", bold, False), ("sans", False, False)):
            if (f, b, i) in self.names:
                return self.names[(f, b, i)]
        return next(iter(self.names.values()))

    def width(self, text: str, style: tuple, size: float) -> float:
        from reportlab.pdfbase.pdfmetrics import stringWidth

        return stringWidth(text, self.name(style), size)

    def drawn(self, text: str, style: tuple) -> str:
        """`text`, noting the characters the style's font has no glyph for, and those of scripts
        drawn here as they would not be read (`unshaped`)."""
        from reportlab.pdfbase.pdfmetrics import getFont

        glyphs = getFont(self.name(style)).face.charToGlyph
        self.missing.update(c for c in text if ord(c) not in glyphs and not c.isspace())
        self.unshaped.update(c for c in text if unshaped(c))
        return text


def unshaped(character: str) -> bool:
    """Whether a character is of a script that this drawing cannot set right: one written right to
    left (Hebrew, Arabic: drawn left to right, Arabic's letters unjoined) or one whose letters change
    shape together (Devanagari to Malayalam, Sinhala, Myanmar, Khmer), which reportlab's canvas
    draws letter by letter."""
    point = ord(character)
    return (unicodedata.bidirectional(character) in ("R", "AL")
            or 0x0900 <= point <= 0x0DFF or 0x1000 <= point <= 0x109F or 0x1780 <= point <= 0x17FF)


_DEJAVU = {("sans", False, False): "DejaVuSans.ttf", ("sans", True, False): "DejaVuSans-Bold.ttf",
           ("sans", False, True): "DejaVuSans-Oblique.ttf", ("sans", True, True): "DejaVuSans-BoldOblique.ttf",
           ("serif", False, False): "DejaVuSerif.ttf", ("serif", True, False): "DejaVuSerif-Bold.ttf",
           ("serif", False, True): "DejaVuSerif-Italic.ttf", ("serif", True, True): "DejaVuSerif-BoldItalic.ttf",
           ("mono", False, False): "DejaVuSansMono.ttf", ("mono", True, False): "DejaVuSansMono-Bold.ttf",
           ("mono", False, True): "DejaVuSansMono-Oblique.ttf", ("mono", True, True): "DejaVuSansMono-BoldOblique.ttf"}
_VERA = {("sans", False, False): "Vera.ttf", ("sans", True, False): "VeraBd.ttf", ("sans", False, True): "VeraIt.ttf",
         ("sans", True, True): "VeraBI.ttf"}


def default_font_files() -> dict:
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


def draw_glyph(canvas, glyph: Glyph, fonts: Fonts) -> None:
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
    plain = styles[0] if styles else ("sans", False, False, None)
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


def words_of(translation: str, styles: list) -> list[list[tuple]]:
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


def draw_paragraph(canvas, paragraph: Paragraph, words: list[list[tuple]], fonts: Fonts,
                   links: dict[int, list[tuple]] | None = None) -> None:
    """A paragraph's translation (its `words`: words_of) in its place: from its first baseline down,
    in its column (its later lines from where its second began), at its size, condensed as its own font was narrower
    (_font_width); where its lines would run into what lies below it, condensed more (to 90 %) and
    then smaller (to SMALLEST of its size). A line alone stays one line down to 80 % of its size.
    The area of each word drawn in a link's style is added to `links` (by the link's number)."""
    first, lines_after = paragraph.lines[0], paragraph.lines[1:]
    rest = min(line.x0 for line in lines_after) if lines_after else first.x0
    column, centre = paragraph.column, (first.x0 + first.x1) / 2
    width = {"left": column.reach - rest, "right": first.x1 - column.left,
             "centre": 2 * (column.reach - centre)}[paragraph.align]
    height = len(lines_after) * paragraph.pitch + paragraph.room
    plain = paragraph.styles[0] if paragraph.styles else ("sans", False, False, None)
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
        font, at, baseline = None, x, first.baseline - number * pitch
        linked = links is not None and any(style[3:4] not in ((), (None,)) for word in line for style, _ in word)
        for index, word in enumerate(line):
            for style, part in ([(word[0][0], " ")] if index else []) + word:
                if fonts.name(style) != font:
                    font = fonts.name(style)
                    text.setFont(font, size)
                text.textOut(fonts.drawn(part, style))
                if linked:  # (where the line holds a link: each part's place, for the link's area)
                    wide = fonts.width(part, style, size) * condensed
                    if style[3:4] not in ((), (None,)) and part != " ":
                        area = (at, baseline - 0.25 * size, at + wide, baseline + 0.85 * size)
                        links.setdefault(style[3], []).append(area)
                    at += wide
        canvas.drawText(text)
    canvas.restoreState()


# (size, width) scales tried in turn until a translation fits: condensed a little first, then smaller
_FITS = [(1.0, 1.0), (1.0, 0.95), (1.0, 0.9)] + [(s / 100, 0.9) for s in range(95, int(SMALLEST * 100) - 1, -5)]


def shares(words: list, lengths: list[int]) -> list[list]:
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
