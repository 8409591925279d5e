"""HTML documents in, HTML documents out (`--input-format html`, the default for .html and .htm
files): a web page or an exported help page translated whole, its markup kept.

Line by line, a paragraph that the page's source wraps over several lines was translated in
pieces, and a line holding a tag that it does not close (`<p>A man in a red`) was given to the
model as text, tags and all. Here the page is read as HTML:
- Each block's text (the words and inline elements between two block-level tags: a paragraph, a
  heading, a list item, a table cell, the title) is one segment, its whitespace made single
  spaces, translated as inline markup (nmt.decode.text.markup: inline tags kept around the words
  they wrap, character references read, the output escaped) and written back in its place over
  as many lines as it had (fewer where the translation has fewer words), the indentation of its
  later lines and the whitespace around it kept.
- The alt, title, placeholder and aria-label attributes and a description <meta>'s content are
  translated as texts of their own (as markup too: their references read, the output escaped).
- Not translated, copied as they stand: script, style, pre and textarea elements; any element
  marked translate="no" or with the class "notranslate"; code, kbd, samp and var (inline); comments,
  the doctype and everything between the blocks; a block without a letter.
- The <html> tag's lang (and xml:lang) names the target language.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass, field

from nmt.data.languages import language_tag
from nmt.decode.text.markup import TAG, not_translated
from nmt.decode.wrapped import broken_over

# Elements that flow within a block's text (HTML's phrasing content, less those that are
# controls or embedded documents, whose labels are units of their own).
INLINE = frozenset({
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "br", "cite", "code", "data", "del", "dfn", "em",
    "font", "i", "img", "ins", "kbd", "mark", "nobr", "q", "rp", "rt", "ruby", "s", "samp", "small",
    "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr"})
COPIED = frozenset({"script", "style", "pre", "textarea"})  # code, or text whose every space counts
TRANSLATED_ATTRIBUTES = ("alt", "title", "placeholder", "aria-label")
_OTHER = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<![^>]*>|<\?[^>]*>", re.S)  # comments, doctype, ...
_ATTRIBUTE = re.compile(r"""\s(?P<name>[^\s=/>"']+)\s*=\s*(?:"(?P<d>[^"]*)"|'(?P<s>[^']*)'|(?P<u>[^\s"'=<>`]+))""")
_DESCRIPTION = re.compile(r"""\sname\s*=\s*["']?description\b""", re.I)


@dataclass
class _Attribute:
    tag: int  # the index of its tag in the document's tags
    start: int  # its value's span in the tag's text
    end: int
    text: str  # its value as markup: its whitespace made single spaces, "&", "<" and ">" escaped


@dataclass
class _Tag:
    start: int  # its span in the document
    end: int
    block: int | None  # the index of the translated block it lies in, if any
    attributes: list[int] = field(default_factory=list)  # indices of its translated attributes
    lang: list[tuple[int, int]] = field(default_factory=list)  # <html>'s lang and xml:lang values, in its text


@dataclass
class _Block:
    start: int  # the span of its text in the document, the whitespace around it left out
    end: int
    text: str  # as translated: one line, whitespace runs made single spaces


@dataclass
class HtmlDocument:
    """An HTML document read for translation: its `texts` (each block's, then each attribute's in
    the order of the document; all inline markup) in, its lines with their translations out
    (`write`)."""
    source: str
    blocks: list[_Block]
    tags: list[_Tag]
    attributes: list[_Attribute]

    @classmethod
    def read(cls, lines: list[str]) -> "HtmlDocument":
        source = "\n".join(lines)
        pieces = _pieces(source)
        blocks, tags, attributes = [], [], []
        run: list[tuple] = []  # the pieces of the block being read
        for piece in [*pieces, ("tag", len(source), len(source))]:
            if piece[0] in ("text", "inline", "point"):
                run.append(piece)
                continue
            if run:
                blocks += _block(source, run)
                run = []
        starts = [block.start for block in blocks]
        for kind, start, end in pieces:
            if kind not in ("inline", "tag"):
                continue
            at = bisect.bisect_right(starts, start) - 1
            tag = _Tag(start, end, at if at >= 0 and end <= blocks[at].end else None)
            for value_start, value_end, text in _translated_attributes(source[start:end]):
                tag.attributes.append(len(attributes))
                attributes.append(_Attribute(len(tags), value_start, value_end, text))
            tag.lang = _language_attributes(source[start:end])
            if tag.attributes or tag.lang:
                tags.append(tag)
        return cls(source, blocks, tags, attributes)

    @property
    def texts(self) -> list[str]:
        return [block.text for block in self.blocks] + [attribute.text for attribute in self.attributes]

    @property
    def numbers(self) -> list[int]:
        """Each text's line in the document, counted from 1 (for warnings)."""
        line_starts = [0] + [i + 1 for i, char in enumerate(self.source) if char == "\n"]
        at = [block.start for block in self.blocks] + [self.tags[a.tag].start for a in self.attributes]
        return [bisect.bisect_right(line_starts, offset) for offset in at]

    def write(self, translations: list[str], language: str | None = None) -> list[str]:
        """The document's lines with each text's translation in its place, and the <html> tag's
        lang attribute naming `language` (a code, nmt.data.languages.language_tag), where given."""
        of_blocks, of_attributes = translations[:len(self.blocks)], translations[len(self.blocks):]
        rewritten = [self._rewritten(tag, of_attributes, language) for tag in self.tags]
        in_block: dict[int, list[tuple[str, str]]] = {}  # a block's inline tags: (as its text has it, rewritten)
        edits = []
        for tag, new in zip(self.tags, rewritten):
            if tag.block is None:
                edits.append((tag.start, tag.end, new))
            else:
                in_block.setdefault(tag.block, []).append((_one_line(self.source[tag.start:tag.end]), _one_line(new)))
        for index, (block, translation) in enumerate(zip(self.blocks, of_blocks)):
            for old, new in in_block.get(index, []):  # the tag as the translation kept it
                translation = translation.replace(old, new)
            span = self.source[block.start:block.end]
            if "\n" in span:  # a text over several lines: written over as many again, indented as they were
                later = span.split("\n")[1]
                indent = later[:len(later) - len(later.lstrip())]
                translation = ("\n" + indent).join(broken_over(translation, span.count("\n") + 1, tags=True))
            edits.append((block.start, block.end, translation))
        out, at = [], 0
        for start, end, text in sorted(edits):
            out += [self.source[at:start], text]
            at = end
        written = "".join([*out, self.source[at:]])
        return written.split("\n") if written else []  # (an empty file stays empty)

    def _rewritten(self, tag: _Tag, translations: list[str], language: str | None) -> str:
        """The tag's text with its translated attributes' values in place of theirs, and its lang
        naming `language`."""
        values = [(a.start, a.end, translations[i]) for i, a in ((i, self.attributes[i]) for i in tag.attributes)]
        if language:
            values += [(start, end, language_tag(language)) for start, end in tag.lang]
        text, out, at = self.source[tag.start:tag.end], [], 0
        for start, end, value in sorted(values):
            # in the value's own quotes ('Copy the ID' stays so), where the translation has none of them
            quote = "'" if text[start] == "'" and "'" not in value else '"'
            out += [text[at:start], quote, value.replace('"', "&quot;") if quote == '"' else value, quote]
            at = end
        return "".join([*out, text[at:]])


def _pieces(source: str) -> list[tuple]:
    """The document in order, as (kind, start, end): "text"; "inline", an inline tag; "point", a
    comment or an inline element copied whole (not_translated), which a block's text holds as
    written; "tag", any other tag; "copied", the rest (an element copied whole, the doctype, ...)."""
    pieces, at = [], 0
    while at < len(source):
        lt = source.find("<", at)
        if lt < 0:
            pieces.append(("text", at, len(source)))
            break
        match = TAG.match(source, lt) or _OTHER.match(source, lt)
        if match is None:  # a "<" that opens no tag: text
            pieces.append(("text", at, lt + 1))
            at = lt + 1
            continue
        if lt > at:
            pieces.append(("text", at, lt))
        at = match.end()
        if match.re is _OTHER:
            pieces.append(("point" if match.group().startswith("<!--") else "copied", lt, at))
            continue
        name = match.group("name").lower()
        opening = not match.group("close") and not match.group("self")
        if opening and (name in COPIED or not_translated(match.group(), name)):
            end = _element_end(source, name, at)
            # an inline element copied whole is part of its block: a point of its text (markup)
            pieces.append(("point" if name in INLINE else "copied", lt, end))
            at = end
        else:
            pieces.append(("inline" if name in INLINE else "tag", lt, at))
    return [piece for piece in pieces if piece[1] < piece[2]]


def _element_end(source: str, name: str, at: int) -> int:
    """Where the element `name` whose opening tag ends at `at` ends: after its closing tag (nested
    elements of the same name counted; script and style hold no tags), or, where it is never
    closed, at the end of the document."""
    depth = 0
    pattern = re.compile(rf"<(/?){re.escape(name)}(?=[\s/>])[^>]*>", re.I)
    while (match := pattern.search(source, at)) is not None:
        at = match.end()
        if name in ("script", "style") and not match.group(1):
            continue
        if not match.group(1) and not match.group().endswith("/>"):
            depth += 1
        elif match.group(1):
            if depth == 0:
                return at
            depth -= 1
    return len(source)


def _block(source: str, run: list[tuple]) -> list[_Block]:
    """The block that a run of text and inline pieces makes, or none where it has no letter."""
    text_pieces = [html.unescape(source[start:end]) for kind, start, end in run if kind == "text"]
    if not any(char.isalpha() for piece in text_pieces for char in piece):
        return []
    start, end = run[0][1], run[-1][2]
    raw = source[start:end]
    start, end = start + len(raw) - len(raw.lstrip()), end - (len(raw) - len(raw.rstrip()))
    parts = []
    for kind, piece_start, piece_end in run:
        piece = source[max(piece_start, start):min(piece_end, end)]
        parts.append(re.sub(r"\s+", " ", piece) if kind == "text" else _one_line(piece))
    return [_Block(start, end, "".join(parts))]


def _one_line(tag: str) -> str:
    """A tag's text on one line, as a block's text holds it."""
    return tag.replace("\r", " ").replace("\n", " ")


def _language_attributes(tag: str) -> list[tuple[int, int]]:
    """The spans of the lang and xml:lang values (their quotes included) of an <html> tag."""
    if TAG.match(tag).group("name").lower() != "html":
        return []
    return [_value_span(match) for match in _ATTRIBUTE.finditer(tag) if match.group("name").lower() in ("lang", "xml:lang")]


def _value_span(match: re.Match) -> tuple[int, int]:
    """The span of an attribute's value, its quotes included."""
    group = next(g for g in ("d", "s", "u") if match.group(g) is not None)
    start, end = match.span(group)
    return start - (group != "u"), end + (group != "u")


def _translated_attributes(tag: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of the tag's attributes that are translated: the span of each one's
    value (its quotes included) and its text as markup, where it has a letter."""
    name = TAG.match(tag).group("name").lower()
    wanted = (*TRANSLATED_ATTRIBUTES, *(("content",) if name == "meta" and _DESCRIPTION.search(tag) else ()))
    found = []
    for match in _ATTRIBUTE.finditer(tag):
        if match.group("name").lower() not in wanted:
            continue
        value = next(v for v in match.group("d", "s", "u") if v is not None)
        text = " ".join(html.unescape(value).split())
        if any(char.isalpha() for char in text):
            found.append((*_value_span(match), html.escape(text, quote=False)))
    return found
