"""Inline markup and verbatim spans carried across a translation by word alignment.

A line is read into `Marked`: the plain text the model translates, and the items taken out of
it, at character offsets of that text. Items are elements (`<b>…</b>`, `<a href="…">…</a>`:
they wrap words) and points (a self-closing tag such as `<br/>`, a comment, a placeholder such
as `{0}` or `%s`, and the verbatim spans of nmt.decode.text.verbatim: they sit between words).
After translation `render` puts each item back, as written in the source:
- an element around the output words aligned to the words it wrapped: the span from the first
  to the last of them, kept inside its parent and clear of its siblings (so the output is always
  well-formed); where none of its words is aligned to an output word, it is written empty where
  its first word would go;
- a point before the output word aligned to the source word after it (else after the one aligned
  to the word before it); a point that began the line begins the output, and one that ended its
  sentence ends the output, before its final punctuation.
Punctuation inside a tagged word's edge stays outside the tags when it was outside in the source
(`<b>dog</b>.` gives `<b>Hund</b>.`). Tags inside a word wrap the whole output word.

An element that is not to be translated is a point too, copied whole as written: code, kbd,
samp and var (code, keys, a program's output, a variable's name) and any element marked
translate="no" or with the class "notranslate" (HTML's and the translation services' signs).

Markup mode also reads character references (`&amp;` is "&" to the model) and escapes `&`, `<`
and `>` in the translated text; a character the source wrote only as a reference (`&copy;`,
`&quot;`, `&#39;`; not a space's, `&nbsp;`) is written as that reference again. Where a plain line is read as markup
(read_as_markup), so is one without tags whose `&`, `<` and `>` are all references ("Tom &amp;
Jerry": text escaped for a web page). Markup that does not nest (an unclosed or stray tag) is a
`MarkupError`: the caller translates that line as text.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from nmt.decode.text.asides import ASIDE, aside_spans, is_phrase
from nmt.decode.text.markdown import CODE_SPAN, markdown_pieces
from nmt.decode.text.quotes import QUOTE, SEAM, quote_spans
from nmt.decode.text.verbatim import PLACEHOLDER, unreadable_spans, verbatim_spans
from nmt.data.escapes import REFERENCE, escaped_text, is_reference
from nmt.data.words import word_spans, written_without_spaces
from nmt.errors import NmtError

TAG = re.compile(r"""<(?P<close>/)?(?P<name>[A-Za-z][\w:.-]*)"""
                  r"""(?:\s+[^\s=/>"']+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*\s*(?P<self>/)?>""")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DECLARATION = re.compile(r"<![^>]*>|<\?[^>]*>")  # <!DOCTYPE html>, <?xml ...?>
_MARKUP = re.compile(f"{_COMMENT.pattern}|{TAG.pattern}|{PLACEHOLDER.pattern}", re.S)
# HTML elements without content: <br> is complete without "/>"
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                  "source", "track", "wbr"})
# elements whose content is not prose: copied as written
VERBATIM_ELEMENTS = frozenset({"code", "kbd", "samp", "var"})
# a character reference: &#38; &#x26; or one of HTML's names (&amp;; a name may lack its ";" in
# HTML, but only with it is it read here)
_LAST_REFERENCE = re.compile(REFERENCE.pattern + "$")
_NOT_TRANSLATED = re.compile(r"""\stranslate\s*=\s*["']?no\b|\sclass\s*=\s*(?:"[^"]*|'[^']*|)\bnotranslate\b""", re.I)


class MarkupError(NmtError):
    """Markup that does not nest; the message says what and where."""


@dataclass
class Item:
    open: str  # an element's opening tag, or a point's whole text, as written in the source
    close: str = ""  # an element's closing tag as written; "" for a point
    start: int = 0  # in the plain text: an element's content is [start, end); a point is at start
    end: int = 0
    point: bool = False
    name: str = ""  # an element's tag name; ASIDE for an aside's parentheses or its point (nmt.decode.text.asides)
    children: list["Item"] = field(default_factory=list)


@dataclass
class Marked:
    text: str  # what the model translates
    items: list[Item]  # the outermost items, in source order
    escape: bool = False  # markup: the output's text is escaped
    # markup: the characters the source wrote only as references, each with its spelling there
    # (besides &, < and >, which `escape` writes as references anyway)
    references: dict[str, str] = field(default_factory=dict)

    @property
    def plain(self) -> bool:
        return not self.items


def mark(line: str, markup: bool, verbatim: bool, lenient: bool = False,
         keep_quantity: Callable[[str], bool] | None = None, markdown: bool = False, asides: bool = False,
         readable: Callable[[str], bool] | None = None,
         names: Callable[[str], list[tuple[int, int]]] | None = None, page: bool = False, quotes: bool = False) -> Marked:
    """`line` read as markup (`markup`; with `markdown` too, text escaped for markup with
    Markdown's marks, both read), or else as Markdown's inline marks (`markdown`,
    nmt.decode.text.markdown; a documentation page's line (`page`) with its inline HTML tags, where
    they nest, read as markup's too), with its asides in parentheses made items named ASIDE (`asides`,
    nmt.decode.text.asides: a phrase an element, a longer aside a point), with its quotes' marks an
    element named QUOTE around their words (`quotes`, nmt.decode.text.quotes), and/or with its
    verbatim spans taken out (`verbatim`; a quantity, "3 people", left in the text where
    `keep_quantity` says so; text in letters that `readable` fails among them, but for that inside
    a name that `names` finds). Markup that does not nest raises MarkupError, or with `lenient` its
    unmatched tags become points (kept in the output as they stand)."""
    if markup and markdown:  # text escaped for markup, with Markdown's marks (mark_lines asks so where it has no tags)
        pieces = _markdown_and_tags(line)
    elif markup:
        pieces = _markup_pieces(line)
    elif markdown and page and looks_like_markup(_code_masked(line)):  # ("Press <kbd>Enter</kbd>, see [it](a.md)")
        pieces = _markdown_and_tags(line)
    else:
        pieces = (markdown and markdown_pieces(line)) or [("text", line)]
    if asides:
        pieces = [split for piece in pieces
                  for split in (_aside_pieces(piece[1], markup) if piece[0] == "text" else [piece])]
    if verbatim:
        pieces = [split for piece in pieces
                  for split in (_verbatim_pieces(piece[1], keep_quantity, readable, names, markup) if piece[0] == "text"
                                else [piece])]
    if quotes:  # (after the verbatim spans, which take a quote that holds just a span, '"42"', whole)
        pieces = [split for piece in pieces
                  for split in (_quote_pieces(piece[1], markup) if piece[0] == "text" else [piece])]
        pieces = _quotes_across_tags(pieces)
    return _assemble(pieces, markup, lenient)


def _code_masked(line: str) -> str:
    """`line` with the angle brackets in its Markdown code spans masked (a tag there is code), its
    length kept."""
    return CODE_SPAN.sub(lambda m: m.group().replace("<", "\0").replace(">", "\0"), line) if "`" in line else line


def _markdown_and_tags(line: str) -> list[tuple]:
    """The pieces of a Markdown line with inline HTML: its marks read with its tags (outside code
    spans) masked, so that a link or emphasis holds tags ("[the <b>big</b> park](url)") and a tag's
    attributes are never read as marks; then the tags of each text piece."""
    masked = TAG.sub(lambda m: "\ue000" * len(m.group()), _COMMENT.sub(lambda m: "\ue000" * len(m.group()),
                                                                       _code_masked(line)))
    pieces, at = [], 0
    for piece in markdown_pieces(masked) or [("text", masked)]:  # (end to end: offsets in `line`)
        raw, at = line[at:at + len(piece[1])], at + len(piece[1])
        pieces += _markup_pieces(raw) if piece[0] == "text" else [(piece[0], raw, *piece[2:])]
    return pieces


def without_tags(text: str) -> str:
    """`text` without its tags, comments, declarations (<!DOCTYPE html>) and placeholders (where it
    has a "<", "{" or "%")."""
    return _DECLARATION.sub("", _MARKUP.sub("", text)) if any(c in text for c in "<{%") else text


def read_as_markup(line: str) -> bool:
    """The rule by which a line given as plain text (or a request's, or a subtitle's) is read as
    markup: it looks like markup, or it is text escaped for markup ("Tom &amp; Jerry")."""
    return looks_like_markup(line) or escaped_text(line)


def looks_like_markup(line: str) -> bool:
    """Whether a text has markup in it: at least one tag or comment, its tags nest (every element
    closed, in order), and no "<" stands outside a tag, so "a < b", "x<y" and a lone or unclosed
    tag stay text. Placeholders ({0}, %s) alone do not make markup. (A program's messages are
    read as markup by this rule alone: nmt.decode.text.messages.as_markup.)"""
    if "<" not in line:
        return False
    tags = [m for m in _MARKUP.finditer(line) if m.group(0).startswith("<")]
    if not tags:
        return False
    outside = _MARKUP.sub("", line)
    if "<" in outside:
        return False
    try:
        mark(line, markup=True, verbatim=False)
    except MarkupError:
        return False
    return True


def _spelled_references(raw_texts: list[str]) -> dict[str, str]:
    """The characters that the text pieces `raw_texts` write only as references, never as
    themselves, each with its first spelling (`&copy;` for "©"), but &, < and >: escaping writes
    those. A reference that stands for two characters, or for a space (`&nbsp;`: the text's spaces
    are made one plain space each), is left out."""
    spelled: dict[str, str] = {}
    literal = set()
    for raw in raw_texts:
        literal.update(REFERENCE.sub("", raw))
        for match in REFERENCE.finditer(raw):
            char = html.unescape(match.group())
            if len(char) == 1 and char not in "&<>" and not char.isspace() and is_reference(match.group()):
                spelled.setdefault(char, match.group())
    return {char: reference for char, reference in spelled.items() if char not in literal}


def mark_lines(lines: list[str], markup: list[bool], verbatim: bool, as_written: list[bool], warn,
               numbers: list[int], keep_quantity: Callable[[str], bool] | None = None,
               markdown: bool = False, asides: bool = False, readable: Callable[[str], bool] | None = None,
               names: list[Callable[[str], list[tuple[int, int]]] | None] | None = None,
               pages: list[bool] | None = None, quotes: bool = False) -> list[Marked | None]:
    """Each line read by `mark` (as markup where `markup` says so, else with Markdown's marks where
    `markdown`, and a page's (`pages`) inline HTML tags where they nest; its asides taken out where
    `asides`, its quotes' marks where `quotes`), or None where nothing is taken out of it (and
    it is not markup) or it is to be translated `as_written`. A line whose markup does not nest is
    warned about (naming its number); its unmatched tags become points. So is a line with text in
    letters that `readable` fails, which is copied as written (taken out, or where it is a name
    that the line's `names` finds, left in its sentence for nmt.decode.text.names to write)."""
    out: list[Marked | None] = []
    for at, (line, is_markup, keep, number) in enumerate(zip(lines, markup, as_written, numbers)):
        named = names[at] if names else None
        page = bool(pages and pages[at])
        # Markdown's marks in text, or in text escaped for markup ("**Tom &amp; Jerry**": no tags)
        marks = markdown and (not is_markup or escaped_text(line)) and (
            markdown_pieces(line) is not None or not is_markup and page and looks_like_markup(_code_masked(line)))
        found = (verbatim and verbatim_spans(line, keep_quantity, readable, named)) or (asides and aside_spans(line)) \
            or (quotes and quote_spans(line))
        if verbatim and not keep and readable is not None and (unread := unreadable_spans(line, readable)):
            warn(f"line {number}: {_quoted(line, unread)}: letters the model's source vocabulary lacks; "
                 "copied as written")
        if keep or not (is_markup or marks or found):
            out.append(None)  # nothing to take out: translated as it is (most lines, at no cost)
            continue
        options = {"keep_quantity": keep_quantity, "markdown": marks, "asides": asides, "readable": readable,
                   "names": named, "page": page, "quotes": quotes}
        try:
            marked = mark(line, is_markup, verbatim, **options)
        except MarkupError as e:
            warn(f"line {number}: markup: {e}; its unmatched tags are kept where they stand")
            marked = mark(line, is_markup, verbatim, lenient=True, **options)
        out.append(marked if marked.items or marked.escape else None)
    return out


def _quoted(line: str, spans: list[tuple[int, int]], width: int = 40) -> str:
    """The first span of `line`, quoted and cut to `width` characters, and how many more there are."""
    start, end = spans[0]
    text = line[start:end] if end - start <= width else line[start:start + width - 1] + "…"
    return f'"{text}"' + (f" and {len(spans) - 1} more" if len(spans) > 1 else "")


def not_translated(tag: str, name: str) -> bool:
    """Whether the element that the opening `tag` starts is copied as written, not translated."""
    return name in VERBATIM_ELEMENTS or _NOT_TRANSLATED.search(tag) is not None


def _markup_pieces(line: str) -> list[tuple]:
    """("text", raw) | ("open", raw, name) | ("close", raw, name) | ("point", raw) in order; an
    element not to be translated (not_translated) one point, from its opening to its closing tag."""
    pieces, at = [], 0
    matches = list(_MARKUP.finditer(line))
    skip_to = 0  # the index of the next match outside an element taken whole
    for index, match in enumerate(matches):
        if index < skip_to:
            continue
        if match.start() > at:
            pieces.append(("text", line[at:match.start()]))
        raw, name = match.group(0), match.group("name")
        if name is None:  # a comment or a placeholder
            pieces.append(("point", raw))
        elif match.group("close"):
            pieces.append(("close", raw, name.lower()))
        elif match.group("self") or name.lower() in VOID:
            pieces.append(("point", raw))
        elif not_translated(raw, name.lower()) and (close := _closing_match(matches, index)) is not None:
            pieces.append(("point", line[match.start():matches[close].end()]))
            at, skip_to = matches[close].end(), close + 1
            continue
        else:
            pieces.append(("open", raw, name.lower()))
        at = match.end()
    if at < len(line):
        pieces.append(("text", line[at:]))
    return pieces


def _closing_match(matches: list[re.Match], opening: int) -> int | None:
    """The index in `matches` of the tag that closes the element opened at `opening`, or None."""
    name, depth = matches[opening].group("name").lower(), 0
    for index in range(opening + 1, len(matches)):
        match = matches[index]
        if (match.group("name") or "").lower() != name or match.group("self"):
            continue
        if not match.group("close"):
            depth += 1
        elif depth == 0:
            return index
        else:
            depth -= 1
    return None


def _aside_pieces(text: str, markup: bool) -> list[tuple]:
    """A text piece's asides: a phrase an element around its words, a longer aside a point (in
    markup, found in the text its references stand for: _spans_as_read)."""
    return _split_out(text, _spans_as_read(text, aside_spans, markup), lambda aside: [
        ("open", "(", ASIDE), ("text", aside[1:-1]), ("close", ")", ASIDE)] if is_phrase(html.unescape(aside[1:-1]))
        else [("point", aside, ASIDE)])


def _quote_pieces(text: str, markup: bool) -> list[tuple]:
    """A text piece's quotes: their marks (as written: `&quot;` in markup) an element around their
    words, and so the quotes inside a quote ('"a 'big' dog"')."""
    def pieces(quote: str) -> list[tuple]:
        first = (markup and REFERENCE.match(quote)) or None
        last = (markup and _LAST_REFERENCE.search(quote)) or None
        opening, closing = first.group() if first else quote[0], last.group() if last else quote[-1]
        return [("open", opening, QUOTE), *_quote_pieces(quote[len(opening):-len(closing)], markup), ("close", closing, QUOTE)]

    return _split_out(text, _spans_as_read(text, quote_spans, markup), pieces)


def _quotes_across_tags(pieces: list[tuple]) -> list[tuple]:
    """`pieces` with each quote whose marks stand in two text pieces, the tags between them
    balanced ('"A <b>dog</b> runs."'), made an element too: its marks cut out of those pieces."""
    if all(piece[0] == "text" for piece in pieces):
        return pieces
    joined, owner, offset = [], [], []  # the text joined (SEAM for any other piece); per character its piece and place
    for i, piece in enumerate(pieces):
        text = piece[1] if piece[0] == "text" else SEAM
        joined.append(text)
        owner += [i] * len(text)
        offset += range(len(text)) if piece[0] == "text" else [0]
    line = "".join(joined)
    marks: dict[int, list[tuple[int, tuple]]] = {}  # piece -> (place in it, the mark's piece)
    for start, end in quote_spans(line, seams=True):
        first, last = owner[start], owner[end - 1]
        if first == last or pieces[first][0] != "text" or pieces[last][0] != "text" or not _balanced(pieces[first + 1:last]):
            continue  # (marks in one piece: the quote pass before took what it could)
        marks.setdefault(first, []).append((offset[start], ("open", line[start], QUOTE)))
        marks.setdefault(last, []).append((offset[end - 1], ("close", line[end - 1], QUOTE)))
    if not marks:
        return pieces
    out = []
    for i, piece in enumerate(pieces):
        at = 0
        for place, mark_piece in sorted(marks.get(i, [])):
            out += [("text", piece[1][at:place])] if place > at else []
            out.append(mark_piece)
            at = place + 1
        out += [piece] if i not in marks else ([("text", piece[1][at:])] if at < len(piece[1]) else [])
    return out


def _balanced(pieces: list[tuple]) -> bool:
    """Whether every element `pieces` open they close, and none they close was opened before them."""
    depth = 0
    for piece in pieces:
        depth += {"open": 1, "close": -1}.get(piece[0], 0)
        if depth < 0:
            return False
    return depth == 0


def _verbatim_pieces(text: str, keep_quantity: Callable[[str], bool] | None, readable: Callable[[str], bool] | None,
                     names: Callable[[str], list[tuple[int, int]]] | None, markup: bool) -> list[tuple]:
    spans = _spans_as_read(text, lambda read: verbatim_spans(read, keep_quantity, readable, names), markup)
    return _split_out(text, spans, lambda span: [("point", span)])


# a character reference as html.unescape reads one (a name may lack its ";")
_UNESCAPED = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")


def _spans_as_read(raw: str, find: Callable[[str], list[tuple[int, int]]], markup: bool) -> list[tuple[int, int]]:
    """The spans `find` gives in a text piece, found in markup in the text its references stand
    for (as the model reads it: "&#39;" an apostrophe, never the hashtag "#39"), as offsets of
    `raw`, each covering the references it holds whole."""
    if not markup or "&" not in raw:
        return find(raw)
    read, starts, ends, at = [], [], [], 0  # the read text; each read character's start and end in raw
    for match in _UNESCAPED.finditer(raw):
        for i in range(at, match.start()):
            read.append(raw[i]), starts.append(i), ends.append(i + 1)
        decoded = html.unescape(match.group())
        read.append(decoded), starts.extend([match.start()] * len(decoded)), ends.extend([match.end()] * len(decoded))
        at = match.end()
    for i in range(at, len(raw)):
        read.append(raw[i]), starts.append(i), ends.append(i + 1)
    return [(starts[a], ends[b - 1]) for a, b in find("".join(read)) if b > a]


def _split_out(text: str, spans: list[tuple[int, int]], pieces_of: Callable[[str], list[tuple]]) -> list[tuple]:
    """A text piece cut at `spans` (in order, not overlapping): the text between them as ("text", ...)
    pieces, each span as the pieces `pieces_of` makes of it."""
    pieces, at = [], 0
    for start, end in spans:
        if start > at:
            pieces.append(("text", text[at:start]))
        pieces += pieces_of(text[start:end])
        at = end
    if at < len(text):
        pieces.append(("text", text[at:]))
    return pieces


def _assemble(pieces: list[tuple], markup: bool, lenient: bool) -> Marked:
    """The pieces' text (whitespace runs made one space, ends stripped, no space left before
    punctuation where a point was taken out) and their items as a tree, offsets in that text."""
    raw_text, root, stack, points_at, raw_texts = "", [], [], set(), []
    for kind, raw, *name in pieces:
        siblings = stack[-1].children if stack else root
        if kind == "close" and (not stack or stack[-1].name != name[0]):
            if not lenient:
                raise MarkupError(f"{raw} closes {stack[-1].open}" if stack else f"{raw} closes no open tag")
            kind = "point"
        if kind == "text":
            raw_text += html.unescape(raw) if markup else raw
            raw_texts.append(raw)
        elif kind == "point":
            siblings.append(Item(raw, start=len(raw_text), end=len(raw_text), point=True, name=name[0] if name else ""))
            points_at.add(len(raw_text))
        elif kind == "open":
            item = Item(raw, start=len(raw_text), name=name[0])
            siblings.append(item)
            stack.append(item)
        else:
            item = stack.pop()
            item.close, item.end = raw, len(raw_text)
    if stack and not lenient:
        raise MarkupError(f"{stack[-1].open} is not closed")
    for depth in reversed(range(len(stack))):  # never closed: a point, its content moved out to its parent
        item = stack[depth]
        siblings = stack[depth - 1].children if depth else root
        at = siblings.index(item)
        siblings[at:at + 1] = [Item(item.open, start=item.start, end=item.start, point=True), *item.children]
        points_at.add(item.start)
    text, where = _normalize_spaces(raw_text, points_at)
    for item in walk(root):
        item.start, item.end = where[item.start], where[item.end]
    return Marked(text, root, escape=markup, references=_spelled_references(raw_texts) if markup else {})


def _normalize_spaces(text: str, points_at: set[int]) -> tuple[str, list[int]]:
    """`text` with whitespace runs as one space and its ends stripped (and a space before
    punctuation dropped where a point sat between them), and for each offset of `text` (and its
    end) the offset it became."""
    if not points_at and text == " ".join(text.split()):  # already so (most lines): unchanged
        return text, list(range(len(text) + 1))
    kept, where = [], []
    for i, char in enumerate(text):
        where.append(len(kept))
        if char.isspace():
            last = not text[i + 1:].strip()
            before_punct = i + 1 in points_at and i + 1 < len(text) and _is_punct(text[i + 1])
            if not kept or kept[-1] == " " or last or before_punct:
                continue
            char = " "
        kept.append(char)
    where.append(len(kept))
    return "".join(kept), where


def walk(items: list[Item]):
    """Every item of the trees `items`, each before its children."""
    for item in items:
        yield item
        yield from walk(item.children)


def _is_punct(char: str) -> bool:
    return unicodedata.category(char)[0] in "PS" and not char.isalnum()


# ---------------------------------------------------------------------------------------------
# After translation: the items around the output's words


@dataclass
class _Unit:
    """A piece of an output word: its leading punctuation, its core, or its trailing punctuation."""
    text: str
    space_before: bool


class _Output:
    """The output words cut into units, and where each word's units lie."""

    def __init__(self, text: str, escape: bool, joins: tuple[int, ...] = (), references: dict[str, str] | None = None):
        # escaping: &, < and > as references, and the characters the source wrote as references so again
        table = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", **(references or {})}) if escape else None
        self.units: list[_Unit] = []
        self.first, self.core, self.core_end, self.end = [], [], [], []
        self.punctuation: list[bool] = []  # whether each word is punctuation only ("。", "»")
        for word, spaced in _words(text, joins):
            lead = next((i for i, c in enumerate(word) if not _is_punct(c)), len(word))
            trail = next((i for i, c in enumerate(reversed(word)) if not _is_punct(c)), len(word))
            self.punctuation.append(lead + trail >= len(word))
            if lead + trail >= len(word):  # punctuation only: one unit
                lead, trail = 0, 0
            parts = (word[:lead], word[lead:len(word) - trail], word[len(word) - trail:])
            self.first.append(len(self.units))
            self.core.append(len(self.units) + (1 if lead else 0))
            self.core_end.append(self.core[-1] + 1)
            for i, part in enumerate(parts):
                if part:
                    self.units.append(_Unit(part.translate(table) if escape else part,
                                            space_before=spaced and (i == 0 or (i == 1 and not lead))))
            self.end.append(len(self.units))

    @property
    def words(self) -> int:
        return len(self.first)


def output_word_spans(text: str, joins: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    """The (start, end) of each word of an output text, as its alignment counts them (nmt.data.words:
    between spaces, each Chinese or Japanese character one, Thai and Lao words by their
    segmenters, Khmer clusters and Burmese syllables), cut again at `joins` (where two sentences
    meet without a space: Hypothesis.joins)."""
    spans = []
    for start, end in word_spans(text):
        cuts = [start, *(j for j in joins if start < j < end), end]
        spans += list(zip(cuts, cuts[1:]))
    return spans


def _words(text: str, joins: tuple[int, ...]) -> list[tuple[str, bool]]:
    """The words of an output text (output_word_spans), each with whether a space comes before it."""
    return [(text[a:b], a == 0 or text[a - 1].isspace()) for a, b in output_word_spans(text, joins)]


def output_words(text: str, joins: tuple[int, ...] = ()) -> int:
    """How many words an output text has, as `render` reads its alignment."""
    return len(_words(text, joins))


def aligned(alignment: str, words: int) -> dict[int, list[int]]:
    """Source word -> its output words, from a Pharaoh alignment (output indices past the last
    word, which a tokenizer's detokenization may have merged, count as the last)."""
    targets: dict[int, list[int]] = {}
    for pair in alignment.split():
        s, t = (int(x) for x in pair.split("-"))
        targets.setdefault(s, []).append(min(t, words - 1))
    return targets


def monotone_alignment(source_words: int, output_words: int) -> str:
    """An alignment along the diagonal, for engines that give none (tags keep their relative place)."""
    if not source_words or not output_words:
        return ""
    return " ".join(f"{min(source_words - 1, t * source_words // output_words)}-{t}" for t in range(output_words))


def render(marked: Marked, output: str, alignment: str, joins: tuple[int, ...] = ()) -> str:
    """The output text with `marked`'s items put back (see the module's docstring); `alignment`
    is the output's Pharaoh alignment to `marked.text`, over its words between spaces and
    `joins` (Hypothesis.joins)."""
    if marked.plain and not marked.escape:
        return output
    out = _Output(output, marked.escape, joins, marked.references)
    placer = _Placer(marked.text, out, aligned(alignment, out.words) if out.words else {})
    tokens: list[tuple[str, str]] = []
    _serialize(placer.place(marked.items, 0, len(out.units)), 0, len(out.units), out, tokens)
    return _join(tokens)


class _Placer:
    def __init__(self, text: str, out: _Output, aligned: dict[int, list[int]]):
        self.text, self.out, self.aligned = text, out, aligned
        words = word_spans(text)
        self.starts, self.ends = [s for s, _ in words], [e for _, e in words]  # the source words', both ascending

    def _word_range(self, item: Item) -> tuple[int, int]:
        """The first and last source words the item overlaps, (-1, -1) for none."""
        first, last = bisect.bisect_right(self.ends, item.start), bisect.bisect_left(self.starts, item.end) - 1
        return (first, last) if first <= last else (-1, -1)

    def _span(self, item: Item) -> tuple[int, int] | None:
        """The output units an element wraps; None where it wraps no text (written empty where it
        sits) or none of its words is aligned."""
        tagged = self.text[item.start:item.end].strip()
        first, last = self._word_range(item)
        targets = [t for i in range(first, last + 1) for t in self.aligned.get(i, [])] if first >= 0 else []
        if not targets or not tagged:
            return None
        start_word, end_word = min(targets), max(targets)
        # Punctuation at the output span's edges goes inside the tags only where the tagged source
        # text has punctuation at that edge ("<b>dog</b>." gives "<b>Hund</b>.", "<b>公园</b>。"
        # "<b>park</b>."), and so does a word of punctuation alone ("<b>cat</b>." gives "<b>猫</b>。").
        # (a point at the element's edge, "(see Fig. 1)" with its number taken out, is its edge)
        inner_start = any(c.point and c.start == item.start for c in item.children) or not _is_punct(tagged[0])
        inner_end = any(c.point and c.start == item.end for c in item.children) or not _is_punct(tagged[-1])
        while inner_start and start_word < end_word and self.out.punctuation[start_word]:
            start_word += 1
        while inner_end and end_word > start_word and self.out.punctuation[end_word]:
            end_word -= 1
        return (self.out.core[start_word] if inner_start else self.out.first[start_word],
                self.out.core_end[end_word] if inner_end else self.out.end[end_word])

    def _gap(self, item: Item) -> int:
        out, n = self.out, len(self.starts)
        if not out.words:
            return 0
        last = out.words - 1
        before_final_punct = out.core_end[last] if out.end[last] > out.core_end[last] else out.end[last]
        rest = self.text[item.start:].replace(" ", "")
        if not rest:  # it ended the line: after the output's final punctuation where it followed the source's
            return len(out.units) if self.text and _is_punct(self.text[-1]) else before_final_punct
        if all(_is_punct(c) for c in rest):  # it ended the sentence, before its final punctuation
            return before_final_punct
        if not self.text[:item.start].strip():  # it began the line: it begins the output
            return 0
        gap = bisect.bisect_left(self.starts, item.start)  # source words before it
        if gap < n and self.aligned.get(gap):
            return out.first[min(self.aligned[gap])]
        if gap > 0 and self.aligned.get(gap - 1):
            after = out.end[max(self.aligned[gap - 1])]
            return before_final_punct if after == len(out.units) else after
        word = round(gap * out.words / max(n, 1))
        return out.first[word] if word < out.words else before_final_punct

    def place(self, items: list[Item], lo: int, hi: int) -> list[tuple]:
        """("element", start, end, item, children) and ("point", at, text) nodes within [lo, hi)
        units, in output order; elements nested and not overlapping."""
        elements, points = [], []
        for order, item in enumerate(items):
            span = None if item.point else self._span(item)
            if span is not None:
                span = (max(span[0], lo), min(span[1], hi))
            if span is not None and span[0] < span[1]:
                elements.append([span[0], span[1], order, item])
            else:
                points.append([min(max(self._gap(item), lo), hi), order, item])
        elements.sort(key=lambda e: (e[0], -e[1], e[2]))
        kept, cursor = [], lo
        for start, end, order, item in elements:
            start = max(start, cursor)
            if start >= end:  # overlapped by a sibling placed before it: written empty after it
                points.append([cursor, order, item])
                continue
            kept.append((start, end, order, item))
            cursor = end
        nodes = []
        for at, order, item in points:
            for start, end, _, _ in kept:
                if start < at < end:
                    at = start
            nodes.append((at, 0, order, ("point", at, _collapsed(item))))
        for start, end, order, item in kept:
            nodes.append((start, 1, order, ("element", start, end, item, self.place(item.children, start, end))))
        return [node for *_, node in sorted(nodes, key=lambda n: n[:3])]


def _collapsed(item: Item) -> str:
    """An item written with no output words in it: a point's text, an element's tags (and its
    points) with nothing between."""
    if item.point:
        return item.open
    return item.open + "".join(_collapsed(child) for child in item.children) + item.close


def _serialize(nodes: list[tuple], lo: int, hi: int, out: _Output, tokens: list[tuple[str, str]]) -> None:
    at = lo
    for node in nodes:
        start = node[1]
        for unit in out.units[at:start]:
            tokens.append(("space" if unit.space_before else "glue", unit.text))
        at = start
        if node[0] == "point":  # glued in writing without spaces, as 3000 in 我有3000元
            before, after = out.units[start - 1] if start > 0 else None, out.units[start] if start < len(out.units) else None
            glued = (before is not None and written_without_spaces(before.text[-1])) or \
                (after is not None and not after.space_before and written_without_spaces(after.text[0]))
            tokens.append(("glue" if glued else "point", node[2]))
        else:
            _, start, end, item, children = node
            tokens.append(("open", item.open))
            _serialize(children, start, end, out, tokens)
            tokens.append(("close", item.close))
            at = end
    for unit in out.units[at:hi]:
        tokens.append(("space" if unit.space_before else "glue", unit.text))


def _join(tokens: list[tuple[str, str]]) -> str:
    """Tokens to text: a word or point is spaced from what came before it, that space going in
    front of the opening tags just before it; closing tags and punctuation attach to the left."""
    parts: list[str] = []
    opens_from = 0  # where the run of opening tags at the end of `parts` starts
    for kind, text in tokens:
        if kind in ("space", "point") and parts and any(p.strip() for p in parts[:opens_from]):
            parts.insert(opens_from, " ")
        parts.append(text)
        opens_from = opens_from if kind == "open" else len(parts)
    return "".join(parts)
