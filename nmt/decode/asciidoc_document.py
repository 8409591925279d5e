"""AsciiDoc documents (`--input-format asciidoc`, the default for .adoc and .asciidoc files): a
project's README.adoc or an Antora or Asciidoctor site's page, translated as its reader sees it
and kept as Asciidoctor reads it. Its blocks are segments of a Markdown document's kinds
(nmt.decode.markdown_document), which writes them.

- Prose is read as wrapped text is (nmt.decode.wrapped): each paragraph whole, written back over
  as many lines, a line break (" +") kept; inline marks, links' words (`https://a.org[the site]`,
  `<<id,words>>`), macros, attribute references and passthroughs carried by decode.markdown's
  rules (nmt.decode.text.markdown).
- A list's item (`* `, `** `, `- `, `. `, `1. `, `a. `, a callout's `<1> `, a checklist's
  `* [x] `) and an admonition paragraph (`NOTE: `) are units, their marker copied in front; a
  description list's term is translated apart from its text (`CPU:: The brain ...`), unless it
  is code (`` `--verbose`:: ``, `:id::`, `spring.aop.ignore::`).
- A section's title (`== Install`, `## Install`, or a title over its underline) is a unit of its
  own; so is a block's title (`.An example`), an image's alternative text (`image::a.png[A dog]`)
  and the document's captions and labels (`:toc-title:`, `:note-caption:`, `:description:`).
  Asciidoctor makes a section's id from its title (`_install`), and links within the page and
  from other pages point at it; where the translated title would make another id, the title's
  id is written above it (`[[_install]]`), so that every link still finds it; a cross reference
  by the title (`<<Install>>`) is written by the id (`<<_install>>`).
- The body of an example, sidebar, quote or open block (`====`, `****`, `____`, `--`) and of an
  admonition block (`[NOTE]` + `====`) is read as a page of its own; a verse's lines one by one.
- A table's cells (`|===`) are translated one by one, its specifiers and pipes kept; an AsciiDoc
  cell over several lines (`a|`) is read as a page of its own; literal and monospace cells (`l|`,
  `m|`, or so by the table's `cols`) are copied (nmt.decode.asciidoc_table).
- Copied as they stand: listing, literal, passthrough and comment blocks (`----`, `....`,
  `++++`, `////`, ``` fences) and any block whose style is code (`[source]`, `[plantuml]`, ...),
  literal (indented) paragraphs, comments (`//`), block attribute lines (`[source,python]`,
  `[[id]]`, `[#id.role]`), block macros and preprocessor lines (`include::`, `ifdef::`,
  `toc::[]`), other attribute entries, the header's author and revision lines, list
  continuations (`+`), CSV tables, thematic and page breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nmt.decode.asciidoc_table import AsciidocTable, has_words
from nmt.decode.markdown_document import MarkdownDocument, _Segment
from nmt.decode.markdown_lines import Framed
from nmt.decode.wrapped import Wrapped

_SECTION = re.compile(r"(={1,6}|#{1,6})([ \t]+)(\S.*?)((?:\s*\[\[[^\]]*\]\])?(?:[ \t]+\1)?\s*)$")
_SETEXT_UNDERLINE = re.compile(r"(=+|-+|~+|\^+|\++)\s*$")
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|\+{4,}|/{4,}|={4,}|\*{4,}|_{4,}|--|`{3}.*|[|,:!]={3,})\s*$")
_COPIED_DELIMITERS = "-.+/`"  # listing, literal, passthrough, comment, fenced code
_ATTRIBUTE_LINE = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\s*$")
_ATTRIBUTE_ENTRY = re.compile(r"(:!?([\w][\w-]*)!?:)(?:([ \t]+)(.*?))?\s*$")
_BLOCK_TITLE = re.compile(r"(\.)(?=[^\s.])(.*?)\s*$")
_BLOCK_MACRO = re.compile(r"\s*([a-z][\w-]*)::(\S*)\[(.*)\]\s*$", re.I)
_COMMENT = re.compile(r"//(?!/{2,}\s*$)")
_ITEM = re.compile(r"(\s*(?:\*{1,5}|-|\.{1,5}|\d{1,9}\.|[a-zA-Z]\.|[ivxIVX]{1,6}\)|<(?:\d+|\.)>)[ \t]+"
                   r"(?:\[[ xX*]\][ \t]+)?)(?=\S)")
_TERM = re.compile(r"(\s*)(?!//)(\S.*?)(:{2,4}|;;)(?:([ \t]+)(.*?))?\s*$")
_ADMONITION = re.compile(r"(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+(?=\S)")
_GIVEN_ID = re.compile(r"^\[\[([^\],\]]+)|^\[#([\w:.-]+)|[\[,]id=\"?([\w:.-]+)")
_PREPROCESSOR = re.compile(r"\s*(?:ifdef|ifndef|ifeval|endif|include)::")  # read on any line, a paragraph's too
_BREAK = re.compile(r"(?:'''|<<<|---|\*\*\*)\s*$")
# a term that is code, not words: `--verbose`, +x+, :id, spring.aop.ignore, MAX_SIZE, $HOME
_CODE_TERM = re.compile(r"`[^`]+`|\+[^+]+\+|[\w.:/@$-]*[._:/@$-][\w.:/@$-]*")
# the attribute entries whose values are words a reader sees: captions, labels, titles, the description
_SHOWN_ATTRIBUTE = re.compile(r"[\w-]*(?:-caption|-title|-label|-signifier)|description")
# the styles of blocks whose lines are the page's words; any other named style is code or data
_PROSE_STYLES = {"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION", "quote", "example", "sidebar", "abstract",
                 "partintro", "normal", "discrete", "float", "appendix", "preface", "glossary", "bibliography",
                 "index", "colophon", "dedication", "horizontal", "qanda", "tabs", "arabic", "decimal", "loweralpha",
                 "upperalpha", "lowerroman", "upperroman", "lowergreek", "verse", "open", "sect1", "sect2"}


@dataclass
class _Context:
    """What a page's blocks share: its attribute entries so far (the section ids' prefix and
    separator), the ids its sections and anchors have taken as it is read (`ids`), its explicit
    ids in order, and the ids its translation's sections have taken as it is written."""
    attributes: dict[str, str] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    explicit: list[str] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    titles: dict[str, str] = field(default_factory=dict)  # each section's title, the id it goes by

    def section_id(self, title: str, taken: set[str] = frozenset()) -> str | None:
        """The id Asciidoctor makes of a section's title (`Getting Started` → `_getting_started`;
        `_getting_started_2` where that is `taken`); None where the page turns such ids off
        (`:sectids!:`)."""
        if "sectids!" in self.attributes:
            return None
        prefix, separator = self.attributes.get("idprefix", "_"), self.attributes.get("idseparator", "_")[:1]
        text = re.sub(r"\{([\w-]+)\}", lambda m: self.attributes.get(m.group(1), m.group()), title)
        text = re.sub(r"(?:link|xref|mailto|footnote|kbd|btn):[^\s\[\]]*\[([^\]]*)\]|(?:https?|ftp)://[^\s\[\]]+\[([^\]]*)\]"
                      r"|<<[^,>]*,([^>]*)>>", lambda m: m.group(1) or m.group(2) or m.group(3) or "", text)
        text = re.sub(r"<[^>]+>|&(?:[a-z][a-z]+\d{0,2}|#\d\d\d{0,4}|#x[\da-f]{2,4});|[^ \w.-]", "", text.lower())
        if separator:
            squeezed = " .-" if separator in "-." else f" {separator}.-"
            made = re.sub(f"[{re.escape(squeezed)}]+", separator, prefix + text)
            made = made[:-1] if made.endswith(separator) else made
            made = made[1:] if not prefix and made.startswith(separator) else made
        else:
            made = (prefix + text).replace(" ", "")
        if made in taken:
            count = 2
            while f"{made}{separator}{count}" in taken:
                count += 1
            made = f"{made}{separator}{count}"
        return made


@dataclass
class _Title:
    """A section's title (`== Install`, or over its underline), its id written above it where the
    translation would make another (`made_id`: the id its words make, None where the page gives
    it one)."""
    lines: list[str]
    parts: list[str]  # its marker, its words, what follows them (a closing marker, an anchor)
    made_id: str | None
    context: _Context
    explicit_before: int = 0  # how many of the page's explicit ids come before it

    @property
    def texts(self) -> list[str]:
        return [self.parts[1]]

    @property
    def numbers(self) -> list[int]:
        return [1]

    def write(self, translations: list[str]) -> list[str]:
        line = self.parts[0] + translations[0] + self.parts[2]
        anchor = []
        if self.made_id is not None:
            taken = self.context.written | set(self.context.explicit[:self.explicit_before])
            if self.context.section_id(translations[0], taken) != self.made_id:
                anchor = [f"[[{self.made_id}]]"]
            self.context.written.add(self.made_id)
        if len(self.lines) == 2:  # a title over its underline, drawn again as long as the title
            return [*anchor, line, self.lines[1].strip()[0] * len(line.rstrip())]
        return [*anchor, line]


@dataclass
class _Item:
    """A list's item or an admonition paragraph (its marker copied in front: `head` with no words),
    or a description list's entry (its term translated, its separator copied); the text after
    them read as wrapped text, over the lines after the first that continue it."""
    head: Framed
    body: Wrapped | None

    @property
    def texts(self) -> list[str]:
        return [*self.head.texts, *(self.body.texts if self.body else [])]

    @property
    def numbers(self) -> list[int]:
        return [1] * len(self.head.texts) + (self.body.numbers if self.body else [])

    def write(self, translations: list[str]) -> list[str]:
        count = len(self.head.texts)
        head = self.head.write(translations[:count])
        if self.body is None:
            return [head]
        written = self.body.write(translations[count:])
        return [head + written[0], *written[1:]]


@dataclass
class _Lines:
    """Lines translated one by one (a verse's), their indentation kept."""
    lines: list[str]

    @property
    def texts(self) -> list[str]:
        return [line.strip() for line in self.lines if has_words(line)]

    @property
    def numbers(self) -> list[int]:
        return [k + 1 for k, line in enumerate(self.lines) if has_words(line)]

    def write(self, translations: list[str]) -> list[str]:
        given = iter(translations)
        return [line[:len(line) - len(line.lstrip())] + next(given) if has_words(line) else line for line in self.lines]


def _given_id(attribute_line: str) -> str | None:
    """The id an attribute line gives the block after it (`[[id]]`, `[#id.role]`, `[id=name]`), or None."""
    match = _GIVEN_ID.search(attribute_line.strip())
    return next(filter(None, match.groups())) if match else None


def _style(attribute_line: str) -> str | None:
    """The style an attribute line gives the block after it (`[source,python]` "source", `[NOTE]`
    "NOTE"), or None."""
    first = attribute_line.strip()[1:-1].split(",")[0].strip()
    match = re.match(r"[A-Za-z][\w-]*(?=[#.%]|$)", first)
    return match.group() if match else None


class AsciidocDocument(MarkdownDocument):
    """An AsciiDoc document read for translation: its `texts` in, its lines with their
    translations out (`write`: MarkdownDocument's)."""

    def __init__(self, segments: list[_Segment], starts: list[int], context: _Context, page: bool):
        super().__init__(segments, starts)
        self.context, self.page = context, page  # page: the whole page, not a block's body within it

    @classmethod
    def read(cls, lines: list[str], context: _Context | None = None) -> "AsciidocDocument":
        blocks = _AsciidocBlocks(lines, context or _Context())
        blocks.read()
        return cls(blocks.segments, blocks.starts, blocks.context, context is None)

    def write(self, translations: list[str]) -> list[str]:
        if self.page:
            self.context.written = set()  # (the sections' ids are taken again, in order)
            translations = [_by_id(translation, self.context) for translation in translations]
        return super().write(translations)


def _by_id(translation: str, context: _Context) -> str:
    """A cross reference to a section by its title (`<<Install it>>`, which the translated title
    would no longer match) made one to its id (`<<_install_it>>`, kept above the title where the
    translation would make another), which shows the translated title."""
    if "<<" not in translation or not context.titles:
        return translation

    def by_id(match: re.Match) -> str:
        name = match.group(1).strip()
        if name in context.ids or name not in context.titles:
            return match.group()
        return f"<<{context.titles[name]}{match.group(2) or ''}>>"
    return re.sub(r"<<([^<>,\n]+?)(,[^<>\n]*)?>>", by_id, translation)


class _AsciidocBlocks:
    """AsciiDoc's blocks, read line by line into segments."""

    def __init__(self, lines: list[str], context: _Context):
        self.lines, self.context = lines, context
        self.segments: list[_Segment] = []
        self.starts: list[int] = []
        self.attributes: list[str] = []  # the block attribute lines above the next block

    def add(self, kind: str, start: int, end: int, reader=None, indent: str = "") -> int:
        last = self.segments[-1] if self.segments else None
        if reader is None and last is not None and last.kind == kind and kind in ("prose", "copied"):
            last.lines += self.lines[start:end]
        else:
            self.segments.append(_Segment(kind, self.lines[start:end], reader, indent))
            self.starts.append(start)
        return end

    def read(self) -> None:
        i = self.header()
        while i < len(self.lines):
            line = self.lines[i]
            if not line.strip():
                i = self.add("prose", i, i + 1)
                continue
            i = self.block(i)
            if not (line.startswith("[") and _ATTRIBUTE_LINE.match(line) or _BLOCK_TITLE.match(line) or _COMMENT.match(line)):
                self.attributes = []  # (they were the block's)
        for segment in self.segments:
            if segment.kind == "prose":
                segment.reader = Wrapped.read(segment.lines, markdown=True, asciidoc=True)

    def header(self) -> int:
        """The document's title (`= Title`) and the author and revision lines after it; returns
        the line after them (0 where the page has no title)."""
        lines = self.lines
        i = 0
        while i < len(lines) and (_COMMENT.match(lines[i]) or _ATTRIBUTE_ENTRY.match(lines[i])):
            i = self.entry(i) if _ATTRIBUTE_ENTRY.match(lines[i]) else self.add("copied", i, i + 1)
        match = _SECTION.match(lines[i]) if i < len(lines) else None
        if match is not None and match.group(1) in ("=", "#"):
            self.add("title", i, i + 1, _Title(lines[i:i + 1], [match.group(1) + match.group(2), match.group(3),
                                                                  match.group(4)], None, self.context))
            i += 1
        elif i + 1 < len(lines) and re.fullmatch(r"=+\s*", lines[i + 1]) and has_words(lines[i][:1]) \
                and abs(len(lines[i + 1].strip()) - len(lines[i].rstrip())) <= 1:  # a title over its underline
            self.add("title", i, i + 2, _Title(lines[i:i + 2], ["", lines[i].rstrip(), ""], None, self.context))
            i += 2
        else:
            return i
        for _ in range(2):  # an author line, a revision line
            if i < len(lines) and lines[i].strip() and not _COMMENT.match(lines[i]) and not _ATTRIBUTE_ENTRY.match(lines[i]):
                i = self.add("copied", i, i + 1)
        return i

    def style(self) -> str | None:
        styles = [_style(line) for line in self.attributes]
        return next((style for style in reversed(styles) if style), None)

    def block(self, i: int) -> int:
        lines, line = self.lines, self.lines[i]
        delimiter = _DELIMITER.match(line)
        if delimiter:
            return self.delimited(i, delimiter.group(1))
        if _COMMENT.match(line):
            return self.add("copied", i, i + 1)
        if _ATTRIBUTE_LINE.match(line) and line.startswith("["):
            self.attributes = [*self.attributes, line]
            given = _given_id(line)
            if given is not None:
                self.context.ids.add(given)
                self.context.explicit.append(given)
            return self.add("copied", i, i + 1)
        if _ATTRIBUTE_ENTRY.match(line):
            return self.entry(i)
        title = _BLOCK_TITLE.match(line)
        if title and has_words(title.group(2)) and not _ITEM.match(line):
            return self.add("framed", i, i + 1, Framed([title.group(1), title.group(2), line[title.end(2):]]))
        section = self.section(i)
        if section is not None:
            return section
        if _BREAK.match(line) or line.strip() == "+":
            return self.add("copied", i, i + 1)
        macro = _BLOCK_MACRO.match(line)
        if macro:
            alt = macro.group(3).split(",")[0]
            if macro.group(1) == "image" and has_words(alt) and not re.search(r"[=\"']", alt):
                start = line.index("[", line.index("::")) + 1
                return self.add("framed", i, i + 1, Framed([line[:start], alt.strip(), line[start + len(alt.rstrip()):]]))
            return self.add("copied", i, i + 1)
        style = self.style()
        if line[:1].isspace() and not _ITEM.match(line) or (style and style not in _PROSE_STYLES):
            return self.add("copied", i, self.paragraph_end(i))  # a literal paragraph; a listing's, a diagram's
        if style == "verse":
            end = self.paragraph_end(i)
            return self.add("title", i, end, _Lines(lines[i:end]))
        if _ITEM.match(line) or _ADMONITION.match(line):
            return self.item(i, (_ITEM.match(line) or _ADMONITION.match(line)).end())
        term = _TERM.match(line)
        if term and not line[:1].isspace():
            return self.term(i, term)
        attached = i > 0 and lines[i - 1].strip() == "+"  # (a list item's paragraph, which its next item ends)
        return self.add("prose", i, self.paragraph_end(i, item=attached))

    def paragraph_end(self, i: int, item: bool = False) -> int:
        """The line after the paragraph (or list item's text) that starts at line i: at a blank
        line, a comment, a block's delimiter, a list continuation ("+"), and in a list another
        item, a term or an attribute line."""
        lines = self.lines
        end = i + 1
        while end < len(lines) and lines[end].strip() and not _COMMENT.match(lines[end]) \
                and not _PREPROCESSOR.match(lines[end]) \
                and not _DELIMITER.match(lines[end]) and lines[end].strip() != "+" \
                and not (item and (_ITEM.match(lines[end]) or _TERM.match(lines[end])
                                   or _ATTRIBUTE_LINE.match(lines[end]) or _BLOCK_TITLE.match(lines[end]))):
            end += 1
        return end

    def item(self, i: int, marker_end: int) -> int:
        end = self.paragraph_end(i, item=True)
        body = [self.lines[i][marker_end:], *self.lines[i + 1:end]]
        return self.add("title", i, end, _Item(Framed([self.lines[i][:marker_end]]), Wrapped.read(body, True, True)))

    def term(self, i: int, term: re.Match) -> int:
        """A description list's entry: its term, and its text on the line (with the lines that
        continue it), or on the lines after it (read as a paragraph)."""
        words = term.group(2)
        head = [term.group(1), words, term.group(3) + (term.group(4) or "")] if has_words(words) \
            and not _CODE_TERM.fullmatch(words.strip()) else \
            [term.group(1) + words + term.group(3) + (term.group(4) or "")]
        if not term.group(5):
            return self.add("title", i, i + 1, _Item(Framed(head), None))
        end = self.paragraph_end(i, item=True)
        body = [term.group(5), *self.lines[i + 1:end]]
        return self.add("title", i, end, _Item(Framed(head), Wrapped.read(body, True, True)))

    def entry(self, i: int) -> int:
        """An attribute entry (`:toc-title: Contents`): kept among the page's attributes; its value
        translated where a reader sees it; copied with the lines that continue it (" \\")."""
        line = self.lines[i]
        match = _ATTRIBUTE_ENTRY.match(line)
        name, value = match.group(2), match.group(4) or ""
        end = i + 1
        while end < len(self.lines) and self.lines[end - 1].rstrip().endswith((" \\", " +")):
            end += 1
        self.context.attributes[name + ("!" if "!" in match.group(1) else "")] = value
        if end == i + 1 and _SHOWN_ATTRIBUTE.fullmatch(name) and has_words(value) and "{" not in value:
            return self.add("framed", i, i + 1, Framed([match.group(1) + match.group(3), value, line[match.end(4):]]))
        return self.add("copied", i, end)

    def section(self, i: int) -> int | None:
        """A section's title at line i (`== Title`, or a title over its underline), once added."""
        lines, line = self.lines, self.lines[i]
        blank_before = i == 0 or not lines[i - 1].strip() or self.segments[-1].kind != "prose"
        if not blank_before:
            return None
        match = _SECTION.match(line)
        if match:
            parts = [match.group(1) + match.group(2), match.group(3), match.group(4)]
            end = i + 1
        elif (i + 1 < len(lines) and _SETEXT_UNDERLINE.match(lines[i + 1]) and has_words(line[:1])
              and len(lines[i + 1].strip()) >= 3 and abs(len(lines[i + 1].strip()) - len(line.rstrip())) <= 1):
            parts, end = ["", line.rstrip(), ""], i + 2
        else:
            return None
        explicit = "[[" in parts[2] or any(re.search(r"^\[\[|^\[#|[\[,]id=", text.strip()) for text in self.attributes)
        unknown = [name for name in re.findall(r"\{([\w-]+)\}", parts[1]) if name not in self.context.attributes]
        # (a value set elsewhere, in an Antora component's antora.yml, say, makes an id that cannot be known here)
        made = None if explicit or unknown else self.context.section_id(parts[1], self.context.ids)
        if made is not None:
            self.context.ids.add(made)
        in_title = re.search(r"\[\[([^\],]+)", parts[2])
        given = in_title.group(1) if in_title else next(filter(None, map(_given_id, self.attributes)), None)
        title_id = made or given
        if title_id is not None:
            self.context.titles.setdefault(parts[1].strip(), title_id)
        if not has_words(parts[1]):
            return self.add("copied", i, end)
        return self.add("title", i, end, _Title(lines[i:end], parts, made, self.context, len(self.context.explicit)))

    def delimited(self, i: int, delimiter: str) -> int:
        """A delimited block from line i to the line that closes it (the same delimiter): its lines
        copied where they are code, a table's cells, or else read as a page of its own."""
        lines = self.lines
        closing = delimiter.rstrip() if not delimiter.startswith("```") else "```"
        close = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == closing), len(lines))
        end = min(close + 1, len(lines))
        style, attributes = self.style(), self.attributes
        self.attributes = []
        if (delimiter != "--" and delimiter[0] in _COPIED_DELIMITERS) or (style and style not in _PROSE_STYLES) \
                or delimiter[0] in ",:!" or any("format=" in text for text in attributes):
            return self.add("copied", i, end)
        self.add("copied", i, i + 1)
        inner = lines[i + 1:close]
        if delimiter.startswith("|="):
            cols = next((m.group(1) or m.group(2) for text in attributes if (m := re.search(r'cols="([^"]*)"|cols=([^,\]]*)', text))), None)
            self.add("title", i + 1, close, AsciidocTable.read(inner, cols, lambda cell: AsciidocDocument.read(cell, self.context)))
        elif style == "verse":
            self.add("title", i + 1, close, _Lines(inner))
        elif inner:
            self.add("nested", i + 1, close, AsciidocDocument.read(inner, self.context))
        return self.add("copied", close, end) if close < len(lines) else end
