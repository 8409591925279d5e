"""Tables of comma-separated values (`*.csv`, or compressed likewise) as a parallel corpus: how
Kaggle, spreadsheets and many datasets hand out their pairs.

The first row names the columns: the two languages' are those it names by a code (`en`, `en_US`,
`English (en)`) or by the language's English name among its words (`English`, `French
words/sentences`), matched to the recipe's codes by nmt.data.languages (`eng_Latn` takes `en`).
Other columns (an id, a score) are left aside. A table of two columns whose first row names
neither language is read as pairs from its first row, source first, as a TSV file is. Fields are
read as RFC 4180 writes them (Python's csv module): in quotes where they hold a comma, a quote
(doubled) or a line break, which becomes a space. The delimiter is the first row's most frequent of `,`, `;`, tab and
`|` (spreadsheets in many countries write `;`). The file is read as a stream.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

from nmt.data.corpus import Corpus, byte_lines, count_lines, file_fingerprint, not_utf8, opened
from nmt.data.languages import LANGUAGE_CODE, code_match, language_name
from nmt.errors import NmtError

_LINE_BREAK = re.compile(r"\s*[\r\n]+\s*")
_CODE_IN_PARENTHESES = re.compile(r"\(\s*(" + LANGUAGE_CODE.pattern + r")\s*\)")


def _names(column: str, language: str) -> int:
    """How well a column's name names `language`: 2 its code, 1 the same language by another code
    or by its English name among the name's words, 0 not."""
    name = column.strip()
    code = name if LANGUAGE_CODE.fullmatch(name) else (found.group(1) if (found := _CODE_IN_PARENTHESES.search(name)) else None)
    if code is not None and (match := code_match(language, code)):
        return match
    english = language_name(language)
    return int(english != language and re.search(rf"(?<!\w){re.escape(english.lower())}(?!\w)", name.lower()) is not None)


class Csv(Corpus):
    """One table's pairs in two of its columns."""

    def __init__(self, path: str, src_lang: str, tgt_lang: str):
        self.path = Path(path)
        if not self.path.is_file():
            raise NmtError(f"{path}: file not found")
        self.src_lang, self.tgt_lang = src_lang, tgt_lang

    def _columns(self, first: list[str]) -> tuple[int, int, bool]:
        """The source's and target's columns, and whether the first row names them (else it is a pair)."""
        scores = [(_names(name, self.src_lang), _names(name, self.tgt_lang)) for name in first]
        source = max(range(len(first)), key=lambda i: scores[i][0], default=None)
        target = max((i for i in range(len(first)) if i != source), key=lambda i: scores[i][1], default=None)
        if source is not None and target is not None and scores[source][0] and scores[target][1]:
            return source, target, True
        if len(first) == 2:
            return 0, 1, False
        raise NmtError(f"{self.path}:1: no columns named for {self.src_lang!r} and {self.tgt_lang!r} (its first row: "
                       f"{', '.join(map(repr, first))}); name them so, e.g. {self.src_lang},{self.tgt_lang}")

    def pairs(self) -> Iterator[tuple[str, str]]:
        with opened(self.path) as raw:
            lines = self._lines(raw)
            delimiter, first = _first_row(lines)
            if not first:
                raise NmtError(f"{self.path}: empty file (no sentence pairs)")
            source, target, named = self._columns(first)
            if not named:
                yield _one_line(first[0]), _one_line(first[1])
            rows = csv.reader(lines, delimiter=delimiter)
            try:
                for row in rows:
                    if not row:
                        continue  # (a blank line)
                    if len(row) <= max(source, target):
                        raise NmtError(f"{self.path}:{rows.line_num + 1}: {len(row)} column(s), the pair's are "
                                       f"{source + 1} and {target + 1}")
                    yield _one_line(row[source]), _one_line(row[target])
            except csv.Error as e:
                raise NmtError(f"{self.path}:{rows.line_num + 1}: not a CSV row ({e})") from None

    def _lines(self, raw) -> Iterator[str]:
        """The file's lines with their line endings (a quoted field may hold one); invalid UTF-8 an
        error naming its line."""
        for number, data in enumerate(byte_lines(raw), start=1):
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as e:
                raise not_utf8(str(self.path), number, data, e) from None
            yield line.removeprefix("\ufeff") if number == 1 else line

    def fingerprint(self):
        return {"files": [file_fingerprint(self.path)]}

    def count_pairs(self):
        """The file's lines, less the first where it names the columns (a field over two lines counts twice)."""
        with opened(self.path) as raw:
            first = _first_row(self._lines(raw))[1]
        return count_lines(self.path) - (bool(first) and self._columns(first)[2])

    def __str__(self):
        return str(self.path)


def _first_row(lines: Iterator[str]) -> tuple[str, list[str]]:
    """The delimiter a table's first line shows, and its first row's fields ([] for an empty file)."""
    first_line = next(lines, "")
    delimiter = _delimiter(first_line)
    return delimiter, next(csv.reader([first_line], delimiter=delimiter), [])


def _one_line(field: str) -> str:
    """A field's text with each line break (and the spaces around it) made one space."""
    return _LINE_BREAK.sub(" ", field) if "\n" in field or "\r" in field else field


def _delimiter(line: str) -> str:
    """Of `,`, `;`, tab and `|`, the one the line holds most (`,` where it holds none)."""
    return max(",;\t|", key=line.count) if any(mark in line for mark in ",;\t|") else ","
