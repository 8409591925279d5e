"""Markdown documents (`--input-format markdown`, the default for .md and .markdown files): a
README or a documentation page, translated as its reader sees it.

- Prose is read as wrapped text is (nmt.decode.wrapped): each paragraph, list item or block quote
  whole, its lines joined (a list item's indented lines too), and written back over as many lines;
  its marker ("- ", "1. ", "> ") kept in front. Inline marks, code spans and links are carried by
  decode.markdown (nmt.decode.text.markdown), on for this format.
- A heading ("# ...") is a unit of its own.
- An HTML block (a line that opens with a tag, through the next blank line) is read as an HTML
  page is (nmt.decode.html_document): each block's text whole, its tags kept.
- A table's cells are translated one by one, its pipes and its separator row kept.
- Copied as they stand: fenced code blocks (``` or ~~~), indented code blocks, front matter
  between "---" lines at the top, HTML comments, link definitions ("[id]: https://..."), a
  heading's underline and thematic breaks ("---", "***").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.decode.html_document import HtmlDocument
from nmt.decode.text.markup import looks_like_markup
from nmt.decode.wrapped import Wrapped

_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_LINK_DEFINITION = re.compile(r"\s{0,3}\[[^\]]+\]:\s*\S+")
_RULE = re.compile(r"\s{0,3}(?:=+|-+|(?:\*\s*){3,}|(?:_\s*){3,})\s*$")  # a heading's underline, a thematic break
_HEADING = re.compile(r"\s{0,3}#{1,6}\s")
_TABLE_SEPARATOR = re.compile(r"\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$|\s*\|\s*:?-+:?\s*\|\s*$")
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])\s")
_HTML_START = re.compile(r"\s{0,3}</?[A-Za-z][\w-]*(?:\s|/?>|$)")


@dataclass
class _Segment:
    kind: str  # "copied", "prose" (a Wrapped), "html" (an HtmlDocument) or "table"
    lines: list[str]
    reader: Wrapped | HtmlDocument | None = None  # what reads and writes its units


class MarkdownDocument:
    """A Markdown document read for translation: its `texts` (each prose unit's, each table cell's,
    in order) in, its lines with their translations out (`write`)."""

    def __init__(self, segments: list[_Segment], starts: list[int]):
        self.segments, self.starts = segments, starts  # starts: each segment's first line, from 0

    @classmethod
    def read(cls, lines: list[str]) -> "MarkdownDocument":
        kinds = _line_kinds(lines)
        segments, starts = [], []
        for i, (line, kind) in enumerate(zip(lines, kinds)):
            joins = segments and segments[-1].kind == kind and kind != "heading"
            if joins and kind == "prose" and kinds[i - 1] == "heading":
                joins = False
            if joins:
                segments[-1].lines.append(line)
            else:
                segments.append(_Segment(kind, [line]))
                starts.append(i)
        for segment in segments:
            if segment.kind in ("prose", "heading"):
                segment.kind, segment.reader = "prose", Wrapped.read(segment.lines, continue_indented=True)
            elif segment.kind == "html":
                segment.reader = HtmlDocument.read(segment.lines)
        return cls(segments, starts)

    @property
    def texts(self) -> list[str]:
        return [text for segment in self.segments for text, _ in _units(segment)]

    @property
    def markup(self) -> list[bool]:
        """Whether each text is read as markup: an HTML block's is, any other where it looks so."""
        return [segment.kind == "html" or looks_like_markup(text)
                for segment in self.segments for text, _ in _units(segment)]

    @property
    def numbers(self) -> list[int]:
        """Each text's line, counted from 1 (for warnings)."""
        return [start + 1 + offset for segment, start in zip(self.segments, self.starts)
                for _, offset in _units(segment)]

    def write(self, translations: list[str]) -> list[str]:
        out, at = [], 0
        for segment in self.segments:
            count = len(_units(segment))
            given, at = translations[at:at + count], at + count
            if segment.kind in ("prose", "html"):
                out += segment.reader.write(given)
            elif segment.kind == "table":
                out += _table_written(segment.lines, given)
            else:
                out += segment.lines
        return out


def _line_kinds(lines: list[str]) -> list[str]:
    """Each line's kind: "copied", "prose", "heading", "html" or "table"."""
    kinds = ["prose"] * len(lines)
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        end = next((j for j in range(1, len(lines)) if lines[j].strip() in ("---", "...")), None)
        if end is not None:
            kinds[:end + 1] = ["copied"] * (end + 1)
            i = end + 1
    in_list = False  # the prose before the last blank line was a list item
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            mark = fence.group(1)
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(mark[0] * len(mark))
                        and not lines[j].strip().strip(mark[0])), len(lines) - 1)
            kinds[i:end + 1] = ["copied"] * (end + 1 - i)
            i, in_list = end + 1, False
            continue
        if line.lstrip().startswith("<!--"):
            end = next((j for j in range(i, len(lines)) if "-->" in lines[j]), len(lines) - 1)
            kinds[i:end + 1] = ["copied"] * (end + 1 - i)
            i, in_list = end + 1, False
            continue
        blank_before = i == 0 or not lines[i - 1].strip() or kinds[i - 1] == "copied"
        indented = line.startswith(("    ", "\t")) and line.strip()
        if indented and blank_before and not in_list:
            end = i
            while end + 1 < len(lines) and (lines[end + 1].startswith(("    ", "\t")) or not lines[end + 1].strip()):
                end += 1
            while end > i and not lines[end].strip():  # blank lines after the code are prose's
                end -= 1
            kinds[i:end + 1] = ["copied"] * (end + 1 - i)
            i, in_list = end + 1, False
            continue
        if blank_before and _HTML_START.match(line):
            end = next((j - 1 for j in range(i + 1, len(lines)) if not lines[j].strip()), len(lines) - 1)
            kinds[i:end + 1] = ["html"] * (end + 1 - i)
            i, in_list = end + 1, False
            continue
        if "|" in line and i + 1 < len(lines) and _TABLE_SEPARATOR.match(lines[i + 1]):
            end = i + 1
            while end + 1 < len(lines) and "|" in lines[end + 1] and lines[end + 1].strip():
                end += 1
            kinds[i:end + 1] = ["table"] * (end + 1 - i)
            i, in_list = end + 1, False
            continue
        if _RULE.match(line) or _LINK_DEFINITION.match(line):
            kinds[i], in_list = "copied", False
        elif _HEADING.match(line):
            kinds[i] = "heading"
        if line.strip() and kinds[i] == "prose":
            in_list = bool(_LIST_ITEM.match(line)) or (in_list and line[:1].isspace())
        i += 1
    return kinds


def _units(segment: _Segment) -> list[tuple[str, int]]:
    """(text, its line in the segment) of each unit a segment translates."""
    if segment.kind in ("prose", "html"):
        return [(text, number - 1) for text, number in zip(segment.reader.texts, segment.reader.numbers)]
    if segment.kind == "table":
        return [(cell.strip().replace("\\|", "|"), offset) for offset, line in enumerate(segment.lines)
                if not _TABLE_SEPARATOR.match(line) for cell in _cells(line) if _translated(cell)]
    return []


def _cells(row: str) -> list[str]:
    """A table row cut at its pipes ("\\|" is a pipe in a cell's text): its cells, and the
    whitespace outside its first and last pipes."""
    return re.split(r"(?<!\\)\|", row)


def _translated(cell: str) -> bool:
    return any(char.isalpha() for char in cell)


def _table_written(rows: list[str], translations: list[str]) -> list[str]:
    """The table's rows with each translated cell's text replaced, its padding and pipes kept."""
    out, given = [], iter(translations)
    for row in rows:
        if _TABLE_SEPARATOR.match(row):
            out.append(row)
            continue
        cells = []
        for cell in _cells(row):
            if _translated(cell):
                lead, trail = cell[:len(cell) - len(cell.lstrip())], cell[len(cell.rstrip()):]
                cell = lead + next(given).replace("|", "\\|") + trail
            cells.append(cell)
        out.append("|".join(cells))
    return out
