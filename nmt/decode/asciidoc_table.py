"""An AsciiDoc table's rows (the lines between its `|===` delimiters), read for translation by
nmt.decode.asciidoc_document: each cell's paragraphs translated and written back over as many
lines, its specifiers (`2+|`, `a|`, `h|`) and pipes kept; an AsciiDoc cell (`a|`) over several
lines read as a page of its own; literal and monospace cells (`l|`, `m|`, or so by the table's
`cols`) copied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Protocol

from nmt.decode.wrapped import broken_over

_WORDS = re.compile(r"[^\W\d_]")


class Page(Protocol):
    """What an AsciiDoc cell is read as (an AsciidocDocument)."""
    texts: list[str]
    numbers: list[int]

    def write(self, translations: list[str]) -> list[str]: ...


def has_words(text: str) -> bool:
    return _WORDS.search(text) is not None


_CELL = re.compile(r"(?<!\S)(\d*(?:\.\d+)?[*+])?([<^>]?(?:\.[<^>])?)([adehlmsv]?)(?<!\\)\|")


@dataclass
class AsciidocTable:
    """A table's rows (between its `|===` lines): each cell's paragraphs translated, written back
    over as many lines (fewer where the translation has fewer words); an AsciiDoc cell (`a|`) over
    several lines read as a page of its own; its specifiers (`2+|`, `a|`, `h|`) and pipes kept."""
    lines: list[str]
    units: list  # each unit: its pieces, [(line, start, end), ...], or an AsciiDoc cell's (line, start, end line, page)

    @classmethod
    def read(cls, lines: list[str], cols: str | None, read_page: Callable[[list[str]], "Page"]) -> "AsciidocTable":
        styles = _column_styles(cols)
        columns = len(styles) if styles else None
        cells: list[tuple[str, list[list[tuple[int, int, int]]], tuple[int, int]]] = []  # (style, paragraphs, start)
        column = 0
        for number, line in enumerate(lines):
            if not line.strip():
                if cells and cells[-1][1][-1]:
                    cells[-1][1].append([])  # a blank line: the cell's next paragraph
                continue
            starts = list(_CELL.finditer(line))
            if columns is None and starts and number == next(k for k, text in enumerate(lines) if text.strip()):
                columns = len(starts)
            at = 0
            for match in starts:
                if cells and match.start() > at:
                    _add_piece(cells[-1][1], line, number, at, match.start())
                style = match.group(3) or (styles[column % len(styles)] if styles else "")
                span = int(match.group(1)[:-1].split(".")[0] or 1) if match.group(1) and match.group(1).endswith("+") else 1
                column = (column + span) % columns if columns else 0
                cells.append((style, [[]], (number, match.end())))
                at = match.end()
            if cells:
                _add_piece(cells[-1][1], line, number, at, len(line))
        units: list = []
        for style, paragraphs, (first, column_start) in cells:
            pieces = [piece for paragraph in paragraphs for piece in paragraph]
            paragraphs = [[piece for piece in paragraph if lines[piece[0]][piece[1]:piece[2]].strip()]
                          for paragraph in paragraphs]
            paragraphs = [paragraph for paragraph in paragraphs if paragraph]
            if style in ("l", "m") or not paragraphs:
                continue  # (literal or monospace)
            if style == "a" and (len(paragraphs) > 1 or any(len(p) > 1 for p in paragraphs)):
                last = pieces[-1]
                if last[2] == len(lines[last[0]]) and all(piece[1] == 0 for piece in pieces if piece[0] != first):
                    page = read_page([lines[first][column_start:], *lines[first + 1:last[0] + 1]])
                    units.append((first, column_start, last[0] + 1, page))
                continue  # (an AsciiDoc cell sharing its lines with another: copied)
            units += [paragraph for paragraph in paragraphs
                      if has_words(" ".join(lines[n][a:b] for n, a, b in paragraph))]
        return cls(lines, units)

    @property
    def texts(self) -> list[str]:
        texts = []
        for unit in self.units:
            if isinstance(unit, tuple):
                texts += unit[3].texts
            else:
                texts.append(" ".join(self.lines[n][a:b].strip() for n, a, b in unit))
        return texts

    @property
    def numbers(self) -> list[int]:
        numbers = []
        for unit in self.units:
            if isinstance(unit, tuple):
                numbers += [unit[0] + number for number in unit[3].numbers]
            else:
                numbers.append(unit[0][0] + 1)
        return numbers

    def write(self, translations: list[str]) -> list[str]:
        replaced: dict[int, list[tuple[int, int, str]]] = {}
        pages: dict[int, list[str]] = {}  # an AsciiDoc cell's lines after its first, by its first
        left_out: set[int] = set()
        given = iter(translations)
        for unit in self.units:
            if isinstance(unit, tuple):
                first, column_start, end, page = unit
                written = page.write([next(given) for _ in page.texts])
                replaced.setdefault(first, []).append((column_start, len(self.lines[first]), written[0]))
                pages[first] = written[1:]
                left_out.update(range(first + 1, end))
                continue
            broken = broken_over(next(given), len(unit), markdown=True, asciidoc=True)  # over the cell's lines
            for k, (n, a, b) in enumerate(unit):
                piece = self.lines[n][a:b]
                lead, trail = piece[:len(piece) - len(piece.lstrip())], piece[len(piece.rstrip()):]
                text = lead + broken[k] + (trail or (" " if b < len(self.lines[n]) else "")) if k < len(broken) else ""
                replaced.setdefault(n, []).append((a, b, text))
        out = []
        for n, line in enumerate(self.lines):
            if n in left_out:
                continue
            for a, b, text in sorted(replaced.get(n, []), reverse=True):
                line = line[:a] + text + line[b:]
            if line.strip() or not self.lines[n].strip():  # (a line whose cell's words moved up is left out)
                out.append(line.rstrip() if n in replaced else line)
            out += pages.get(n, [])
        return out


def _add_piece(paragraphs: list[list[tuple[int, int, int]]], line: str, number: int, start: int, end: int) -> None:
    """A piece of a cell's text added to its last paragraph; where it ends in a line break (" +"),
    the break is left out of it, and it ends the paragraph's unit."""
    text = line[start:end].rstrip()
    if text.endswith(" +"):
        paragraphs[-1].append((number, start, start + len(text) - 2))
        paragraphs.append([])
    else:
        paragraphs[-1].append((number, start, end))


def _column_styles(cols: str | None) -> list[str]:
    """Each column's style letter from a table's `cols` ("1,2a", "3*", "<1m,>2"), or [] unknown."""
    if not cols:
        return []
    styles = []
    for spec in re.split(r"[,;]", cols):
        spec = spec.strip()
        times = re.match(r"(\d+)\*", spec)
        style = spec[-1] if spec and spec[-1] in "adehlmsv" else ""
        styles += [style] * (int(times.group(1)) if times else 1)
    return styles
