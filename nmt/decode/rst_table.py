"""reStructuredText's grid and simple tables (nmt.decode.rst_document), their cells translated and
the table drawn again around the translations, as docutils reads it: each cell's text wrapped
within its column's width (a column grown by half or 10 columns at most where its translations are
longer, and as wide as its longest word), a row as tall as its tallest cell, the borders and the header's line
drawn to the new widths.

A cell is translated where it holds one paragraph; a cell holding more (a list, two paragraphs, a
literal block) keeps its lines as written. A table whose shape is more than rows and columns (a
cell spanning columns or rows, a simple table's span underlines or blank lines) is copied whole:
redrawing it would take the spans' geometry, and docutils rejects a grid drawn wrong.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from nmt.decode.text.list_markers import list_marker

_GRID_BORDER = re.compile(r"\+(?:[-=]+\+)+")
_SIMPLE_BORDER = re.compile(r"=+(?: +=+)*|-+(?: +-+)*")  # (a line of "-" between rows, or under a header)
# a word for wrapping: a run of non-spaces, a literal or role with the spaces inside it kept whole
_WORD = re.compile(r"(?:`+[^`]*`+_{0,2}|\S)+")


def width(text: str) -> int:
    """How many columns `text` takes (a wide character, as CJK's, two)."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _padded(text: str, columns: int) -> str:
    return text + " " * (columns - width(text))


def _grown(columns: int, texts: list[str]) -> int:
    """A column's width for `texts` (its cells' translations) where it was `columns` wide: wider,
    where the longest text needs it, by half or 10 columns at most, and as wide as the longest word."""
    if not texts:
        return columns
    longest = max(width(text) for text in texts)
    return max(columns, min(longest, columns + max((columns + 1) // 2, 10)), *(width(word) for text in texts
                                                                       for word in _WORD.findall(text)))


def _wrapped(text: str, columns: int) -> list[str]:
    """`text` over lines of at most `columns` columns, broken between words (a longer word alone)."""
    lines: list[str] = []
    for word in _WORD.findall(text):
        if lines and width(lines[-1]) + 1 + width(word) <= columns:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _paragraph(lines: list[str]) -> str | None:
    """A cell's lines as one paragraph's text; None where they hold more (blank lines between
    them, a list's item, a directive, a literal block) or no words."""
    texts = [line.strip() for line in lines]
    while texts and not texts[-1]:
        texts.pop()
    while texts and not texts[0]:
        texts.pop(0)
    if not texts or "" in texts or not any(char.isalpha() for char in " ".join(texts)):
        return None
    if any(list_marker(text) or text.startswith((".. ", ">>>", "|")) for text in texts) or texts[-1].endswith("::"):
        return None
    indents = {len(line) - len(line.lstrip()) for line in lines if line.strip()}
    return " ".join(texts) if len(indents) == 1 else None  # (an indented line: a quote or a definition)


@dataclass
class _Cell:
    lines: list[str]  # as written, between its column's borders
    text: str | None  # its paragraph, translated; None: kept as written


class _Table:
    """A table's rows of cells, each row's first line (`row_lines`): its texts, the translated cells'."""
    rows: list[list[_Cell]]
    row_lines: list[int]

    @property
    def texts(self) -> list[str]:
        return [cell.text for row in self.rows for cell in row if cell.text is not None]

    @property
    def numbers(self) -> list[int]:
        return [first + 1 for row, first in zip(self.rows, self.row_lines) for cell in row if cell.text is not None]

    def _translated(self, translations: list[str]) -> list[list[str | None]]:
        """Each row's cells' translations (None for a cell kept as written)."""
        given = iter(translations)
        return [[next(given) if cell.text is not None else None for cell in row] for row in self.rows]


class GridTable(_Table):
    """A grid table (`+---+---+` borders, `|` between cells) read for translation: its `texts`
    (each translated cell's) in, its lines drawn again around their translations out (`write`)."""

    def __init__(self, indent: str, borders: list[str], rows: list[list[_Cell]], widths: list[int],
                 row_lines: list[int]):
        self.indent, self.borders, self.rows, self.widths = indent, borders, rows, widths
        self.row_lines = row_lines  # each row's first line in the table

    @classmethod
    def read(cls, lines: list[str]) -> "GridTable | None":
        """The table of `lines` (its borders first and last); None where a cell spans columns or rows."""
        indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
        body = [line.rstrip() for line in lines]
        if any(not line.startswith(indent) for line in body):
            return None
        body = [line[len(indent):] for line in body]
        top = body[0]
        if not _GRID_BORDER.fullmatch(top) or not _GRID_BORDER.fullmatch(body[-1]):
            return None
        joints = [k for k, char in enumerate(top) if char == "+"]
        borders, rows, row_lines, current, first = [], [], [], [], 0
        for number, line in enumerate(body):
            if _GRID_BORDER.fullmatch(line):
                if [k for k, char in enumerate(line) if char == "+"] != joints:
                    return None  # (a cell spanning columns)
                if current:
                    rows.append([_cell([row[a + 1:b] for row in current]) for a, b in zip(joints, joints[1:])])
                    row_lines.append(first)
                elif number:
                    return None
                borders.append(line)
                current, first = [], number + 1
                continue
            if len(line) != len(top) or any(line[k] != "|" for k in joints):
                return None  # (a cell spanning rows or columns, or a line drawn out of the grid)
            current.append(line)
        if current or len(borders) != len(rows) + 1:
            return None
        return cls(indent, borders, rows, [b - a - 1 for a, b in zip(joints, joints[1:])], row_lines)

    def write(self, translations: list[str]) -> list[str]:
        texts = self._translated(translations)
        widths = [_grown(columns - 2, [row[column] for row in texts if row[column] is not None]) + 2
                  for column, columns in enumerate(self.widths)]  # (a space each side)
        out = [self._border(self.borders[0], widths)]
        for k, (row, row_texts) in enumerate(zip(self.rows, texts)):
            cells = [[f" {line} " for line in _wrapped(text, widths[column] - 2)] if text is not None else cell.lines
                     for column, (cell, text) in enumerate(zip(row, row_texts))]
            height = max(len(lines) for lines in cells)
            for line in range(height):
                out.append(self.indent + "|" + "|".join(_padded(lines[line] if line < len(lines) else "", widths[column])
                                                          for column, lines in enumerate(cells)) + "|")
            out.append(self._border(self.borders[k + 1], widths))
        return out

    def _border(self, line: str, widths: list[int]) -> str:
        char = "=" if "=" in line else "-"
        return self.indent + "+" + "+".join(char * columns for columns in widths) + "+"


def _cell(lines: list[str]) -> _Cell:
    return _Cell(lines, _paragraph(lines))


class SimpleTable(_Table):
    """A simple table (columns drawn by `=====  =====` borders) read for translation: its `texts`
    (each translated cell's) in, its lines drawn again around their translations out (`write`).
    A row's first column is one line (a line whose first column is blank continues the row above);
    the others are wrapped within their widths."""

    def __init__(self, indent: str, lines: list[str], columns: list[tuple[int, int]], rows: list[list[_Cell]],
                 row_lines: list[int]):
        self.indent, self.lines, self.columns, self.rows, self.row_lines = indent, lines, columns, rows, row_lines

    @classmethod
    def read(cls, lines: list[str]) -> "SimpleTable | None":
        """The table of `lines` (a border first and last); None where it has span underlines (a line
        of "-" across a column's gap), blank lines or text across a gap."""
        indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
        body = [line.rstrip() for line in lines]
        if any(not line.startswith(indent) for line in body):
            return None
        body = [line[len(indent):] for line in body]
        columns = [(m.start(), m.end()) for m in re.finditer("=+", body[0])]
        rows, row_lines, groups = [], [], []
        for number, line in enumerate(body):
            if _SIMPLE_BORDER.fullmatch(line):
                if [(m.start(), m.end()) for m in re.finditer("[-=]+", line)] != columns:
                    return None  # (a span's underline)
                continue
            if not line.strip():
                return None  # (a blank line: rows, or a cell's paragraphs)
            if any(k < len(line) and line[k] != " " for (_, end), (start, _) in zip(columns, columns[1:])
                   for k in range(end, start)):
                return None  # (text across a gap: a cell spanning columns)
            if line[:columns[0][1]].strip():
                groups.append([line])
                row_lines.append(number)
            elif groups and not _SIMPLE_BORDER.fullmatch(body[number - 1]):
                groups[-1].append(line)
            else:
                return None  # (a row whose first column is blank)
        bounds = [(start, following) for (start, _), (following, _) in zip(columns, [*columns[1:], (None, None)])]
        for group in groups:  # (the last column's text may run past its border)
            rows.append([_cell([line[start:end] for line in group]) for start, end in bounds])
        return cls(indent, body, columns, rows, row_lines)

    def write(self, translations: list[str]) -> list[str]:
        texts = self._translated(translations)
        widths = [end - start for start, end in self.columns]
        gaps = [b_start - a_end for (_, a_end), (b_start, _) in zip(self.columns, self.columns[1:])]
        for column in range(len(widths)):
            widths[column] = _grown(widths[column], [row[column] for row in texts if row[column] is not None])
        for row, row_texts in zip(self.rows, texts):
            for column, (cell, text) in enumerate(zip(row, row_texts)):
                if text is None:
                    widths[column] = max(widths[column], *(width(line.rstrip()) for line in cell.lines))
                elif column == 0:  # (one line: the next would start a row)
                    widths[column] = max(widths[column], width(text))
        rows = iter(zip(self.rows, texts))
        out = []
        for line in self.lines:
            if _SIMPLE_BORDER.fullmatch(line):
                out.append(self.indent + "".join(line[0] * columns + (" " * gaps[k] if k < len(gaps) else "")
                                                 for k, columns in enumerate(widths)))
                continue
            if not line[:self.columns[0][1]].strip():
                continue  # (a row's later line: written with its row)
            row, row_texts = next(rows)
            cells = [[text] if column == 0 and text is not None else _wrapped(text, widths[column]) if text is not None
                     else [part.rstrip() for part in cell.lines] for column, (cell, text) in enumerate(zip(row, row_texts))]
            for k in range(max(len(lines) for lines in cells)):
                parts = [lines[k] if k < len(lines) else "" for lines in cells]
                out.append((self.indent + "".join(_padded(part, widths[column]) + (" " * gaps[column] if column < len(gaps) else "")
                                                  for column, part in enumerate(parts))).rstrip())
        return out
