"""A program's message (a gettext msgid, an XLIFF segment) cut into the parts the model translates
and the parts kept as written: its line breaks and each line's edge spaces, and the syntax of ICU
MessageFormat's plural and select ("{count, plural, =0 {no files} one {# file} other {# files}}",
as Angular, FormatJS and i18next write them), whose every branch is translated apart, so that the
syntax stays whole and the program can still read it. Words around a plural or select are moved
into each of its branches first, so that each branch is a whole sentence to translate. In a plural branch "#" stands for the
number: the model is given a placeholder instead, which markup keeps (nmt.decode.text.markup), and
it is written back as "#".

Works on inline markup: a cut never falls inside a paired element (<f1>...</f1>, a line break in
it stays); a message whose ICU syntax does not parse, or would be cut there, is cut at its lines
alone.
"""

from __future__ import annotations

import contextlib
import contextvars
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

from nmt.decode.text.end_marks import without_stop_its_source_lacks
from nmt.decode.text.markup import looks_like_markup
from nmt.decode.text.verbatim import PLACEHOLDER

_ICU_START = re.compile(r"\{\s*[\w.]+\s*,\s*(plural|selectordinal|select)\s*,\s*(?:offset\s*:\s*\d+\s*)?")
_SELECTOR = re.compile(r"\s*(?:=\s*-?\d+|[\w-]+)\s*\{")
_CLOSING = re.compile(r"\s*\}")
_NUMBER = "{__n__}"  # a plural branch's "#", as the model is given it
_PAIRED = re.compile(r"<(/?)f\d+>")
_CODE = re.compile(r"</?[fp]\d+/?>")  # an XLIFF or Office file's inline code, as nmt writes it for the model
_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)(?:\s[^<>]*?)?(/?)>")
_MARKUP = re.compile(f"</?\\w+/?>|&\\w+;|{PLACEHOLDER.pattern}")
_ABBREVIATION = re.compile(r"\W*(?:[A-Z]{2}|[^\W\d_])\W*")  # a letter, or two capitals ("BEST" is a word)
_DATE_FORMAT = re.compile(r"(?:%[-_0^#]?[A-Za-z]|[^\w%])+")  # strftime's "%Y-%m-%d", "%B %d, %Y"


@dataclass(frozen=True)
class Part:
    text: str
    translated: bool  # False: kept as written (spaces, line breaks, ICU syntax)
    plural: bool = False  # a plural branch's text, whose "#" is the number
    branch: bool = False  # inside an ICU plural's or select's branch, where braces are syntax
    kept: bool = False  # its translation a translator's, kept (--update): written as it is

    @property
    def model_text(self) -> str:
        """The text as the model is given it (in a branch, ICU's quoting undone)."""
        if self.branch:
            return _icu_unquoted(self.text, self.plural)
        return self.text.replace("#", _NUMBER) if self.plural else self.text

    def written(self, translation: str) -> str:
        """The model's translation of `model_text` as written back: without a full stop the model
        ended it with where the text had no mark at its end (a title, a button's label: "Save
        file", not "Datei speichern.")."""
        if not self.kept:
            translation = without_stop_its_source_lacks(self.text, translation)
        if self.branch:
            translation = _icu_quoted(translation, self.plural)
        return translation.replace(_NUMBER, "#") if self.plural else translation


_EVERY_LINE = contextvars.ContextVar("every_line", default=False)


@contextlib.contextmanager
def read_as_translation():
    """Messages made in this block (a translation read for --update) count every line as a text,
    those a source's would keep as written too: "JA" for "YES", "Okay" for "OK" are a translator's."""
    token = _EVERY_LINE.set(True)
    try:
        yield
    finally:
        _EVERY_LINE.reset(token)


class Message:
    """A program's message to translate, its `markup` (as_markup of its text, or a file's inline
    markup) cut into `parts`; a subclass gives its `line` in its file. Made by a dataclass whose
    fields include `markup`."""

    markup: str
    line: int

    def __post_init__(self):
        self.parts = self.cut(_EVERY_LINE.get())

    def cut(self, every_line: bool = False) -> list[Part]:
        """Its markup as parts (message_parts; a format whose messages have syntax of their own cuts it too)."""
        return message_parts(self.markup, every_line)

    @property
    def to_translate(self) -> bool:
        return any(part.translated for part in self.parts)

    @property
    def text(self) -> str:
        """The message as its file has it (as_markup's inverse)."""
        return from_markup(self.markup, self.markup)

    def translation(self, translations: Iterator[str]) -> str:
        """Its translation, from an iterator of its parts' translations, in its text's own form."""
        return from_markup(joined(self.parts, translations), self.markup)


def _icu_quoted(text: str, plural: bool) -> str:
    """A branch's translation with what ICU would read as syntax quoted: a brace that is not a
    placeholder's ('{', '}'), in a plural's branch a "#" that is not the number ('#'); and where an
    apostrophe stands before a brace, "#", another apostrophe or the branch's end, where ICU would
    read it as a quote, every apostrophe doubled."""
    if re.search(r"'(?=[{}#|']|$)", text):
        text = text.replace("'", "''")
    pieces, at = [], 0
    for placeholder in [*PLACEHOLDER.finditer(text), None]:
        end = placeholder.start() if placeholder else len(text)
        pieces.append(re.sub(r"[{}#]" if plural else r"[{}]", lambda m: f"'{m.group(0)}'", text[at:end]))
        if placeholder:
            pieces.append(placeholder.group(0))
            at = placeholder.end()
    return "".join(pieces)


def _icu_unquoted(text: str, plural: bool) -> str:
    """A branch's text as ICU reads it, for the model: '' an apostrophe, a stretch quoted from
    before a syntax character ('{', '#') the text itself, and in a plural's branch a "#" outside
    quotes the number (_NUMBER)."""
    def unquoted(match: re.Match) -> str:
        token = match.group(0)
        return "'" if token == "''" else token[1:-1] if token.startswith("'") else _NUMBER if plural else "#"
    return re.sub(r"''|'[{}#|][^']*'|#", unquoted, text)


def joined(parts: list[Part], translations: Iterator[str]) -> str:
    """A message written back from its `parts`, each translated one's translation taken in turn
    from `translations`."""
    return "".join(part.written(next(translations)) if part.translated else part.text for part in parts)


def message_parts(text: str, every_line: bool = False) -> list[Part]:
    """`text` as parts that join into it again (or into the same message with its words around a
    plural moved into the branches: `_hoisted`); each translated part holds no line break, has no
    space at its ends, and holds a letter outside its placeholders and tags ("%lld", "+2" are kept as
    written). So is a part whose only word is a letter or two capitals ("%sK", "OK", "GB"), which a
    model would make a word of, and a date's format ("%Y-%m-%d", "%B %d, %Y"). `every_line`: every
    line with more than spaces is a part of its own, kept as written or not (a translator's text
    kept by --update: "JA" for "YES")."""
    cuts = _hoisted(text) or _icu_parts(text, plural=False)
    if cuts is None or not _outside_elements(text, cuts):
        cuts = [Part(text, True)]
    parts: list[Part] = []
    for cut in cuts:
        if not cut.translated:
            parts.append(cut)
            continue
        for number, line in enumerate(_lines(cut.text)):
            if number:
                parts.append(Part("\n", False))
            core = line.strip()
            words = _MARKUP.sub(" ", core)
            if not core or not every_line and (not any(c.isalpha() for c in words) or _ABBREVIATION.fullmatch(words)
                                               or _DATE_FORMAT.fullmatch(core)):
                parts.append(Part(line, False))
                continue
            start = line.index(core)
            parts += [Part(line[:start], False), Part(core, True, cut.plural, cut.branch),
                      Part(line[start + len(core):], False)]
    return [part for part in parts if part.text]


def _hoisted(text: str) -> list[Part] | None:
    """A message of one plural or select with words of its own around it ("You have {n, plural,
    one {# message} other {# messages}}.") as the same message with those words moved into each
    branch ("{n, plural, one {You have # message.} other {You have # messages.}}", as ICU's guide
    writes messages for translators), so that each branch is translated as the whole sentence it
    makes, not as a fragment; tags around it go into each branch too ("<b>{n}</b> {n, plural, ...}",
    as FormatJS writes rich text). None where there is no such plural or select, where it holds
    another, or where the words around it hold a line break, "#", a file's inline code or tags that
    do not nest."""
    core = text.strip()
    start = _ICU_START.search(core)
    if start is None:
        return None
    position, branches = start.end(), []
    while not (closing := _CLOSING.match(core, position)):
        selector = _SELECTOR.match(core, position)
        end = _matching_brace(core, selector.end()) if selector else None
        if end is None:
            return None
        branches.append((selector.group(0), core[selector.end():end]))
        position = end + 1
    before, after = core[:start.start()], core[closing.end():]
    around = before + after
    if (not any(c.isalpha() for c in around) or any(mark in around for mark in "#\n") or not _nests(around)
            or _ICU_START.search(around) or any(_ICU_START.search(body) or "\n" in body for _, body in branches)):
        return None
    plural = start.group(1) != "select"
    lead, trail = text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    parts, syntax = [Part(lead, False)], start.group(0)
    for selector, body in branches:
        parts += [Part(syntax + selector, False), Part(" ".join((before + body + after).split()), True, plural, True)]
        syntax = "}"
    return [part for part in (*parts, Part(syntax + closing.group(0), False), Part(trail, False)) if part.text]


def _nests(markup: str) -> bool:
    """Whether the tags of `markup` nest (each opened one closed, in order), none of them a file's
    inline code (`<f1>`, `<p2/>`: a code given to each branch would stand in a segment twice)."""
    if _CODE.search(markup):
        return False
    open_tags: list[str] = []
    for tag in _TAG.finditer(markup):
        closing, name, empty = tag.groups()
        if empty:
            continue
        if not closing:
            open_tags.append(name)
        elif not open_tags or open_tags.pop() != name:
            return False
    return not open_tags


def _lines(markup: str) -> list[str]:
    """Markup cut at its line breaks, but for those inside a paired element."""
    lines, start, depth = [], 0, 0
    for match in re.finditer(r"\n|<(/?)f\d+>", markup):
        if match.group(0) != "\n":
            depth += -1 if match.group(1) else 1
        elif depth == 0:
            lines.append(markup[start:match.start()])
            start = match.end()
    return [*lines, markup[start:]]


def _icu_parts(text: str, plural: bool, branch: bool = False) -> list[Part] | None:
    """`text` cut at its ICU syntax, its branches' texts cut likewise (None: it does not parse)."""
    parts: list[Part] = []
    at = 0
    while (start := _ICU_START.search(text, at)) is not None:
        parts.append(Part(text[at:start.start()], True, plural, branch))
        branch_is_plural = start.group(1) != "select"
        syntax, position = start.group(0), start.end()
        while not (closing := _CLOSING.match(text, position)):
            selector = _SELECTOR.match(text, position)
            end = _matching_brace(text, selector.end()) if selector else None
            inner = _icu_parts(text[selector.end():end], branch_is_plural, True) if end is not None else None
            if inner is None:
                return None
            parts += [Part(syntax + selector.group(0), False), *inner]
            syntax, position = "}", end + 1
        parts.append(Part(syntax + closing.group(0), False))
        at = closing.end()
    parts.append(Part(text[at:], True, plural, branch))
    return [part for part in parts if part.text]


def _matching_brace(text: str, start: int) -> int | None:
    """Where the brace that closes a message beginning at `start` stands (None: never closed);
    braces ICU quotes ('{') are text."""
    depth, position = 1, start
    while position < len(text):
        quoted = re.match(r"''|'[{}#|][^']*'", text[position:])
        if quoted:
            position += quoted.end()
            continue
        depth += {"{": 1, "}": -1}.get(text[position], 0)
        if depth == 0:
            return position
        position += 1
    return None


def _outside_elements(text: str, parts: list[Part]) -> bool:
    """Whether each cut between `parts` falls outside every paired element of the markup."""
    at = 0
    for part in parts[:-1]:
        at += len(part.text)
        if sum(-1 if m.group(1) else 1 for m in _PAIRED.finditer(text, 0, at)):
            return False
    return True


def as_markup(text: str) -> str:
    """A text as inline markup for translation: as it is where it is markup already (HTML tags that
    nest), else with &, < and > escaped, so that placeholders and character references are read
    as they are written."""
    return text if looks_like_markup(text) else html.escape(text, quote=False)


def from_markup(translation: str, source: str) -> str:
    """A translation back in the form of its `source` (as_markup's inverse)."""
    return translation if looks_like_markup(source) else html.unescape(translation)
