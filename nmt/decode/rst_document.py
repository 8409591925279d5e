"""reStructuredText documents (`--input-format rst`, the default for .rst files): a Python
project's README or a Sphinx page, translated as its reader sees it, and kept as Sphinx and
docutils read it. Its blocks are segments of a Markdown document's kinds
(nmt.decode.markdown_document), which writes them.

- Prose is read as wrapped text is (nmt.decode.wrapped): each paragraph, list item (`- `, `* `,
  `1. `, `#. `, `(a) `) and indented paragraph whole, written back over as many lines with its
  marker and indentation; inline marks, literals (``` ``x`` ```), roles (`:ref:`label``) and links
  carried by decode.markdown's rules (nmt.decode.text.markdown).
- A section's title is a unit of its own, its underline (and overline) drawn again as wide as
  its translation, as docutils requires.
- A paragraph ending in `::` keeps the `::`, and the indented block after it is a literal block,
  copied.
- The body of an admonition (`.. note::`, `warning`, `tip`, `seealso`, sphinx-design's tabs and
  cards, ...) and a figure's caption are read as a page of their own and written back indented;
  an admonition's or topic's title is translated, and so are a note's words on its first line
  (`.. warning:: Do not ...`); a directive's options (`:class: x`) stay.
- A definition list's term and its definition (the lines indented under it) are translated
  apart, the definition read as a page of its own.
- A footnote's or citation's text (`.. [1] ...`) and a field's body (`:param x: ...`) are
  translated, their labels kept; a line block's lines (`| ...`) one by one.
- A grid or simple table's cells are translated one by one, and the table drawn again around
  them (nmt.decode.rst_table); a `list-table`'s title and cells are translated, its rows being lists.
- Copied as they stand: other directives (`code-block`, `image`, `toctree`, `math`,
  `literalinclude`, `autofunction`, ... and any unknown one) with their bodies, comments, link
  targets (`.. _name: url`, `__ url`), substitution definitions, doctest blocks (`>>>`), tables
  with cells spanning columns or rows, transitions and fields that are data
  (`:type x:`, `:rtype:`, `:author:`, `:version:`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.decode.markdown_document import MarkdownDocument, _Segment
from nmt.decode.markdown_lines import Framed
from nmt.decode.rst_table import GridTable, SimpleTable, width
from nmt.decode.text.list_markers import list_marker
from nmt.decode.wrapped import Wrapped

_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}\s*$")  # ===, ---, ~~~, ^^^, ***: a title's underline or a transition
_EXPLICIT = re.compile(r"(\s*)\.\.(?:\s|$)")  # ".. ": a directive, comment, target, footnote or substitution
_ANONYMOUS_TARGET = re.compile(r"\s*__ \S")
_DIRECTIVE = re.compile(r"(\s*)\.\.\s+([\w:.+-]+)::(.*)$")
_FOOTNOTE = re.compile(r"(\s*\.\.\s+\[(?:#?[\w-]*|\*|\d+)\]\s+)(.*)$")
_FIELD = re.compile(r"(\s*:(?!:)([^:`]+?):(?:\s+|$))(.*)$")  # :param x: its text
_LINE_BLOCK = re.compile(r"(\s*\|\s+)(.+?)\s*$")
_GRID_TABLE = re.compile(r"\s*\+[-=+]+\+\s*$")
_SIMPLE_TABLE = re.compile(r"\s*=+(?:\s+=+)+\s*$")
_OPTION = re.compile(r"\s*:[\w-]+:(?:\s|$)")
# directives whose body is the page's words (Sphinx's and docutils' admonitions, sphinx-design's
# tabs and cards), whose argument is a title, and whose body after its options is a caption
_PROSE = {"note", "warning", "tip", "important", "caution", "danger", "attention", "hint", "error", "admonition",
          "seealso", "topic", "sidebar", "versionadded", "versionchanged", "deprecated", "only", "container",
          "tab", "tab-item", "tab-set", "card", "dropdown", "grid-item-card", "epigraph", "highlights", "pull-quote",
          "compound", "rubric", "list-table"}
_TITLED = {"admonition", "topic", "sidebar", "rubric", "tab", "tab-item", "card", "dropdown", "grid-item-card",
           "list-table"}
_CAPTIONED = {"figure"}
_DATA_FIELDS = re.compile(r"(?:type|rtype|vartype|kwtype|author|authors|version|revision|date|copyright|contact|"
                          r"address|organization|status|license|tocdepth|orphan|nosearch|nocomments|meta)\b", re.I)


@dataclass
class _Title:
    """A section's title: its text and its underline (and overline), drawn again to fit; where the
    page links to the section by its title (`Installation`_, an implicit target), an explicit
    target of that name is written before it, so that the link still finds it translated."""
    lines: list[str]
    overline: bool
    linked: bool = False

    @property
    def texts(self) -> list[str]:
        return [self.lines[1 if self.overline else 0].strip()]

    @property
    def numbers(self) -> list[int]:
        return [2 if self.overline else 1]

    def write(self, translations: list[str]) -> list[str]:
        title = self.lines[1 if self.overline else 0]
        indent = title[:len(title) - len(title.lstrip())]
        line = indent + translations[0]
        under = self.lines[-1].rstrip()
        char = under[0]
        wide = width(line) > len(under) or len(under) == width(title.rstrip())  # (drawn to the title's width)
        adornment = char * width(line) if wide else under
        target = []
        if self.linked and translations[0] != title.strip():
            name = title.strip()
            target = [f"{indent}.. _{'`' + name + '`' if ':' in name else name}:", ""]
        return [*target, *([adornment, line, adornment] if self.overline else [line, adornment])]


class RstDocument(MarkdownDocument):
    """A reStructuredText document read for translation: its `texts` in, its lines with their
    translations out (`write`: MarkdownDocument's, a paragraph's `::` kept)."""

    @classmethod
    def read(cls, lines: list[str]) -> "RstDocument":
        blocks = _RstBlocks(lines)
        blocks.read()
        linked = _linked_names("\n".join(lines))
        for segment in blocks.segments:
            if segment.kind == "title" and _name(segment.reader.texts[0]) in linked:
                segment.reader.linked = True
        return cls(blocks.segments, blocks.starts)

    @property
    def texts(self) -> list[str]:
        """Each unit's text, a paragraph's "::" given as its reader sees it: "Example::" as
        "Example:", "Example ::" as "Example"."""
        return [_as_shown(text) for text in MarkdownDocument.texts.fget(self)]

    def write(self, translations: list[str]) -> list[str]:
        sources = MarkdownDocument.texts.fget(self)
        return super().write([_literal_marker_kept(text, translation) for text, translation in zip(sources, translations)])


def _name(text: str) -> str:
    """A reference's name as docutils matches it: case and runs of spaces aside."""
    return " ".join(text.split()).lower()


def _linked_names(text: str) -> set[str]:
    """The names a page links to by name (`two words`_, word_; not `text <url>`_) that no explicit
    target names: a section's title, an implicit target."""
    names = {_name(match.group(1)) for match in re.finditer(r"(?<!`)`([^`<>]+)`_(?!_)", text)}
    names |= {_name(match.group(1)) for match in re.finditer(r"(?<![\w`\\])([A-Za-z0-9][\w.-]*?[A-Za-z0-9])_(?![\w_])", text)}
    explicit = {_name(match.group(1) or match.group(2))  # (those an explicit target names: a link's URL, a label)
                for match in re.finditer(r"^\s*\.\. _(?:`([^`]+)`|([^:`][^:]*)):", text, re.M)}
    return names - explicit


def _as_shown(text: str) -> str:
    if not text.endswith("::"):
        return text
    return text[:-3].rstrip() if text[:-2].endswith(" ") else text[:-1]


def _literal_marker_kept(text: str, translation: str) -> str:
    """A paragraph ending in "::" (a literal block follows) keeps it: "Example::" as "Beispiel::"."""
    if not text.endswith("::"):
        return translation
    return translation.rstrip(".:;。 ") + (" ::" if text[:-2].endswith(" ") else "::")


class _RstBlocks:
    """reStructuredText's blocks, read line by line into segments."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.segments: list[_Segment] = []
        self.starts: list[int] = []
        self.literal_next = False  # the paragraph before ended in "::": an indented block after it is literal
        self.fields_end = -1  # the line after the last field read

    def add(self, kind: str, start: int, end: int, reader=None, indent: str = "", head: str | None = None) -> int:
        last = self.segments[-1] if self.segments else None
        if reader is None and kind == "copied" and last is not None and last.kind == "copied":
            last.lines += self.lines[start:end]
        elif kind == "prose" and last is not None and last.kind == "prose" and last.reader is None:
            last.lines += self.lines[start:end]
        else:
            self.segments.append(_Segment(kind, self.lines[start:end], reader, indent, head))
            self.starts.append(start)
        return end

    def read(self) -> None:
        i = 0
        while i < len(self.lines):
            line = self.lines[i]
            if not line.strip():
                i = self.add("prose", i, i + 1)
                continue
            blank_before = i == 0 or not self.lines[i - 1].strip()
            end = self.block(i, blank_before)
            if end is None:  # a paragraph's line
                end = self.add("prose", i, i + 1)
                following = self.lines[end] if end < len(self.lines) else ""
                if not following.strip():
                    self.literal_next = line.rstrip().endswith("::")
            else:
                self.literal_next = False
            i = end
        for segment in self.segments:
            if segment.kind == "prose":
                segment.reader = Wrapped.read(segment.lines, markdown=True)

    def indented_end(self, i: int, indent: int) -> int:
        """The line after the lines from i that are indented past `indent` columns or blank, blank
        lines at its end left out."""
        end = i
        while end < len(self.lines) and (not self.lines[end].strip()
                                         or len(self.lines[end]) - len(self.lines[end].lstrip()) > indent):
            end += 1
        while end > i and not self.lines[end - 1].strip():
            end -= 1
        return end

    def block(self, i: int, blank_before: bool) -> int | None:
        lines, line = self.lines, self.lines[i]
        indent = len(line) - len(line.lstrip())
        if blank_before and self.literal_next and indent > self._paragraph_indent(i):
            return self.add("copied", i, self.indented_end(i, self._paragraph_indent(i)))
        if blank_before and line.strip() == "::":  # (a literal block's marker alone)
            self.literal_next = True
            return self.add("copied", i, i + 1)
        title = self.title(i)
        if title is not None:
            return title
        if blank_before and _ADORNMENT.match(line.strip()) and (i + 1 == len(lines) or not lines[i + 1].strip()):
            return self.add("copied", i, i + 1)  # a transition
        if blank_before and (_GRID_TABLE.match(line) or _SIMPLE_TABLE.match(line)):
            end = self._table_end(i)
            table = (GridTable if _GRID_TABLE.match(line) else SimpleTable).read(lines[i:end])
            if table is None or not table.texts:  # (cells spanning columns or rows; no words)
                return self.add("copied", i, end)
            return self.add("title", i, end, table)
        if blank_before and line.lstrip().startswith(">>>"):
            end = next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines))
            return self.add("copied", i, end)
        if _EXPLICIT.match(line):
            return self.explicit(i, indent)
        if _ANONYMOUS_TARGET.match(line):  # "__ https://...": a link's target
            return self.add("copied", i, self.indented_end(i + 1, indent))
        field = _FIELD.match(line)
        if field and (blank_before or self.fields_end == i):  # a field list's first field, or one after another
            self.fields_end = self.field(i, field, indent)
            return self.fields_end
        line_block = _LINE_BLOCK.match(line)
        if line_block:
            return self.add("framed", i, i + 1, Framed([line_block.group(1), line_block.group(2),
                                                        line[line_block.end(2):]]))
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if blank_before and following.strip() and len(following) - len(following.lstrip()) > indent \
                and not list_marker(line).strip() and not self.literal_next:
            return self.definition(i, indent)
        return None

    def definition(self, i: int, indent: int) -> int:
        """A definition list's item: its term (a line of its own, `term : classifier` whole) and its
        definition, the lines indented under it, read as a page of its own."""
        lines, line = self.lines, self.lines[i]
        self.add("framed", i, i + 1, Framed([line[:indent], line.strip(), ""]))
        end = self.indented_end(i + 1, indent)
        body_indent = lines[i + 1][:len(lines[i + 1]) - len(lines[i + 1].lstrip())]
        body = [text[len(body_indent):] if text.strip() else "" for text in lines[i + 1:end]]
        return self.add("nested", i + 1, end, RstDocument.read(body), body_indent)

    def _paragraph_indent(self, i: int) -> int:
        """The indentation of the paragraph that ends before line i's blank lines."""
        j = i - 1
        while j >= 0 and not self.lines[j].strip():
            j -= 1
        return len(self.lines[j]) - len(self.lines[j].lstrip()) if j >= 0 else 0

    def title(self, i: int) -> int | None:
        """A section's title at line i (its text over an underline, or between an overline and an
        underline), once added."""
        lines = self.lines
        if i + 2 < len(lines) and _ADORNMENT.match(lines[i]) and lines[i + 1].strip() \
                and lines[i + 2].rstrip() == lines[i].rstrip():
            return self.add("title", i, i + 3, _Title(lines[i:i + 3], True))
        if i + 1 < len(lines) and not lines[i][:1].isspace() and _ADORNMENT.match(lines[i + 1]) \
                and len(lines[i + 1].rstrip()) >= min(4, width(lines[i].rstrip())) and not _ADORNMENT.match(lines[i]):
            return self.add("title", i, i + 2, _Title(lines[i:i + 2], False))
        return None

    def _table_end(self, i: int) -> int:
        """The line after a table starting at line i: a grid table's last line before a blank one; a
        simple table's after its last border."""
        end = next((j for j in range(i, len(self.lines)) if not self.lines[j].strip()), len(self.lines))
        if _GRID_TABLE.match(self.lines[i]):
            return end
        borders = [j for j in range(i, len(self.lines)) if _SIMPLE_TABLE.match(self.lines[j])]
        after = [j for j in borders if j + 1 == len(self.lines) or not self.lines[j + 1].strip()]
        return after[0] + 1 if after else end

    def explicit(self, i: int, indent: int) -> int:
        """A line starting with "..": a directive, a footnote, or else a comment, a target or a
        substitution definition (copied), with the indented lines after it."""
        lines, line = self.lines, self.lines[i]
        end = self.indented_end(i + 1, indent)
        footnote = _FOOTNOTE.match(line)
        if footnote and footnote.group(2).strip():
            body_indent = " " * (indent + 3)
            body = [text[len(body_indent):] if text.strip() else "" for text in lines[i + 1:end]]
            return self.add("nested", i, end, RstDocument.read([footnote.group(2), *body]), body_indent,
                            head=footnote.group(1))
        directive = _DIRECTIVE.match(line)
        if directive is None:
            return self.add("copied", i, end)
        name = directive.group(2).lower().split(":")[-1]
        argument = directive.group(3).strip()
        if name in _TITLED | _PROSE and any(char.isalpha() for char in argument):  # a title, or a note's first words
            head = line[:directive.start(3)] + directive.group(3)[:len(directive.group(3)) - len(directive.group(3).lstrip())]
            self.add("framed", i, i + 1, Framed([head, argument, line[len(head) + len(argument):]]))
        else:
            self.add("copied", i, i + 1)
        if name not in _PROSE | _CAPTIONED or end == i + 1:
            return self.add("copied", i + 1, end) if end > i + 1 else end
        start = i + 1
        while start < end and (not lines[start].strip() or _OPTION.match(lines[start])):  # the options, and the blank after
            option = lines[start].strip() and len(lines[start]) - len(lines[start].lstrip())
            start += 1
            while option and start < end and lines[start].strip() and len(lines[start]) - len(lines[start].lstrip()) > option:
                start += 1  # (an option's value continued on the lines after it)
        if start > i + 1:
            self.add("copied", i + 1, start)
        if start == end:
            return end
        body_indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
        body = [text[len(body_indent):] if text.strip() else "" for text in lines[start:end]]
        return self.add("nested", start, end, RstDocument.read(body), body_indent)

    def field(self, i: int, field: re.Match, indent: int) -> int:
        """A field (`:param x: its text`, docinfo's `:Author: ...`): its body translated after its
        name, the indented lines after it too; a field that is data copied."""
        end = self.indented_end(i + 1, indent)
        if _DATA_FIELDS.match(field.group(2).strip()) or not any(char.isalpha() for char in field.group(3)):
            return self.add("copied", i, end)
        body = [text.strip() for text in self.lines[i + 1:end]]
        continuation = self.lines[i + 1][:len(self.lines[i + 1]) - len(self.lines[i + 1].lstrip())] if end > i + 1 \
            else " " * (indent + 4)
        document = RstDocument.read([field.group(3), *body])
        return self.add("nested", i, end, document, continuation, head=field.group(1))
