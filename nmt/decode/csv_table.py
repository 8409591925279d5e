"""Tables of comma- or tab-separated values in and out (`--input-format csv`, the default for .csv
and .tsv files), read for the model's direction (`for_direction`). Two kinds of table:

- **A program's texts in several languages**, a column each (Godot's translation tables,
  `keys,en,es`; the string tables of Unity and many games): a table whose first row names the
  model's source language over a column (`en`, `en_US`, `English`, `English (en)`). Each row's
  text in that column is translated into the target language's column: the one the first row
  names (`de`, `de_DE`, `German (de)`), whose filled cells are kept, or a column added at the end,
  headed in the source column's style. A text without a word to translate (`%d`, `OK`) is copied.
  A folder's record says what each filled cell was made from (`sources`, by each row's key): a
  cell whose source text changed since is translated again.
- **Any other table** (data: a catalogue, a survey's answers): each cell's text is translated in
  its place, in every column of text (one with a cell of two words or more; a column of single
  words, such as a state, a vendor or a category a program reads, is copied, with a warning naming
  it) or in those `decode.table_columns` names (by the first row's names, or numbers from 1). The first row, the columns' names a program reads the table by, is kept as
  written (`decode.table_header: false`: a table without one, its first row translated). A cell
  without a word, or of one word that holds a digit, `_`, `/`, `\\`, `@` or `:` or a dot between
  letters (an id, a code, a URL, a file's name), a slug (`red-leather-shoe`), a boolean or a
  missing value (`TRUE`, `no`, `NULL`, `N/A`), is copied.

Everything else stays as it was, byte for byte: the delimiter (`,`, `;`, a tab or `|`, found in
the file; a tab in a .tsv file), quotes, line endings, a byte-order mark, cells not translated. A
translation is written in quotes where its cell was quoted, or where it holds the delimiter, a
quote or a line break (its quotes doubled). A cell's lines are translated one by one, and
placeholders (`%s`, `{name}`) kept, as in a program's other message files; its BBCode (Godot's
rich text: `[b]`, `[color=red]`, `[url=...]`) goes around the words aligned to the ones it
wrapped (nmt.decode.text.bbcode).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from nmt.data.languages import LANGUAGE_CODE, LANGUAGE_NAMES, code_match, language_name, language_tag
from nmt.decode.message_file import MessageFile, some_lines, spliced, utf8_text
from nmt.decode.text.bbcode import message_markup, message_text
from nmt.decode.text.messages import Message, as_markup, joined
from nmt.decode.translation_record import fingerprint
from nmt.errors import NmtError

_DELIMITERS = ",;\t|"
_SNIFFED_RECORDS = 50  # records read to choose a file's delimiter
_NAMED_CODE = re.compile(r"(.*?\S)(\s*)\(\s*(" + LANGUAGE_CODE.pattern + r")\s*\)")  # English (en), English(en)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")  # a word, to tell a column of text from one of single words
_DATA_WORD = re.compile(r"\S*(?:[\d_/\\@:]|[^\W\d_]\.[^\W\d_])\S*"  # one word: an id, a code, a URL, a file's name
                        r"|[a-z]+(?:-[a-z]+)+"  # a slug (red-leather-shoe)
                        r"|(?i:true|false|yes|no|null|none|nan|n/a)")  # a boolean, a missing value


@dataclass
class _Field:
    start: int  # where the field stands in the text, its quotes included
    end: int
    value: str  # as read: quotes taken off, "" a quote
    quoted: bool
    line: int


@dataclass
class _Record:
    fields: list[_Field]
    end: int  # where its line ending starts (or the text ends)
    line: int

    @property
    def blank(self) -> bool:
        return len(self.fields) == 1 and not self.fields[0].quoted and not self.fields[0].value


@dataclass
class _Cell(Message):
    """A text to translate and where its translation goes: in `field`'s place, or (`field` None)
    into a column added to its record."""
    markup: str
    line: int
    field: _Field | None
    record: _Record
    source: _Field  # the cell translated (in a table of languages, the source column's)
    codes: list | None = None  # its BBCode's tags, where it has any (nmt.decode.text.bbcode)

    @classmethod
    def of(cls, source: _Field, field: _Field | None, record: _Record) -> "_Cell":
        markup, codes = message_markup(source.value)
        return cls(markup, source.line, field, record, source, codes)

    def translation(self, translations) -> str:
        return message_text(joined(self.parts, translations), self.markup, self.codes)


def _closing_quote(text: str, at: int) -> int:
    """Where the quote that closes a quoted field opened before `at` stands (-1: none)."""
    while (at := text.find('"', at)) != -1 and text.startswith('""', at):
        at += 2
    return at


_FIELD_ENDS = {delimiter: re.compile(f"[{re.escape(delimiter)}\r\n]") for delimiter in _DELIMITERS}


def _field_end(text: str, at: int, delimiter: str) -> int:
    """Where an unquoted field from `at` ends: at the delimiter, a line break or the text's end."""
    end = _FIELD_ENDS[delimiter].search(text, at)
    return end.start() if end is not None else len(text)


def _records(text: str, delimiter: str, name: str, limit: int | None = None) -> list[_Record]:
    """The records of a table (RFC 4180: a field in quotes may hold the delimiter, line breaks and
    doubled quotes; a quote that does not enclose its field is a character of it), each field's
    place in `text`; an NmtError naming the line of a quoted field that is never closed."""
    records, at, line = [], 0, 1
    while at < len(text) and (limit is None or len(records) < limit):
        fields, first = [], line
        while True:
            start, start_line, quoted = at, line, False
            if text.startswith('"', at):
                close = _closing_quote(text, at + 1)
                if close == -1:
                    raise NmtError(f"{name}:{line}: a quoted field is never closed (a quote missing)")
                if close + 1 == len(text) or text[close + 1] in (delimiter, "\n", "\r"):
                    value, quoted = text[at + 1:close].replace('""', '"'), True
                    line += text.count("\n", at, close)
                    at = close + 1
            if not quoted:
                at = _field_end(text, at, delimiter)
                value = text[start:at]
            fields.append(_Field(start, at, value, quoted, start_line))
            if not text.startswith(delimiter, at):
                break
            at += len(delimiter)
        records.append(_Record(fields, at, first))
        at += 2 if text.startswith("\r\n", at) else 1 if text.startswith(("\n", "\r"), at) else 0
        line += 1
    return records


def _delimiter(text: str, name: str) -> str:
    """A table's delimiter: a tab for a .tsv file, else of `,`, `;`, tab and `|` the one that cuts
    the most of the first records into as many fields as the first (two or more)."""
    if name.lower().endswith((".tsv", ".tab")):
        return "\t"
    best, most = ",", 0
    for candidate in _DELIMITERS:
        try:
            records = [r for r in _records(text, candidate, name, _SNIFFED_RECORDS) if not r.blank]
        except NmtError:
            continue
        width = len(records[0].fields) if records else 1
        alike = sum(len(r.fields) == width for r in records) if width > 1 else 0
        if alike > most:
            best, most = candidate, alike
    return best


def _language_of(header: str) -> tuple[str, str] | None:
    """The language a column's name names, and the name's style: ("en", "code") for `en` or
    `en_US`, ("en", "named") for `English (en)`, ("en", "name") for `English`; None for another name."""
    name = header.strip()
    if (named := _NAMED_CODE.fullmatch(name)) is not None:
        return named.group(3), "named"
    if LANGUAGE_CODE.fullmatch(name) and language_name(name) != name:
        return name, "code"
    code = next((code for code, english in LANGUAGE_NAMES.items() if english.lower() == name.lower()), None)
    return (code, "name") if code is not None else None


def _column_of(header: _Record, language: str, other_than: int | None = None) -> int | None:
    """The column whose name names `language` (the same code first, then the same language)."""
    found = [(code_match(language, named[0]), index) for index, field in enumerate(header.fields)
             if index != other_than and (named := _language_of(field.value)) is not None]
    best = max(found, default=(0, None))
    return best[1] if best[0] else None


def _row_keys(rows: list[_Record]) -> list[str | None]:
    """Each row's key: its first column's text, where no other row has it (else None)."""
    counts = Counter(row.fields[0].value for row in rows)
    return [row.fields[0].value if counts[row.fields[0].value] == 1 and row.fields[0].value.strip() else None
            for row in rows]


def _named_languages(names: _Record) -> list[str]:
    """The languages a first row names over its columns but the first (the keys'), in order."""
    return [named[0] for field in names.fields[1:] if (named := _language_of(field.value)) is not None]


def _column_name(source_name: str, target: str) -> str:
    """The name of a column added for `target`, in the style of the source column's name."""
    tag = language_tag(target)
    _, style = _language_of(source_name)
    if style == "named":
        named = _NAMED_CODE.fullmatch(source_name.strip())
        return f"{language_name(target)}{named.group(2)}({tag.replace('-', '_') if '_' in named.group(3) else tag})"
    if style == "name":
        return language_name(target)
    return tag.replace("-", "_") if "_" in source_name else tag


def _written(text: str, delimiter: str, field: _Field | None) -> str:
    """A cell's text as the table writes `field`'s (None: a cell added): in quotes (its quotes
    doubled) where the cell was quoted, or where the text holds what would end it or a quote (but
    where the cell held quotes unquoted, as the file writes them, and the text starts with none)."""
    bare_quotes = field is not None and not field.quoted and '"' in field.value and (
        field.value.startswith('"') or not text.startswith('"'))
    marks = (delimiter, "\n", "\r") if bare_quotes else (delimiter, '"', "\n", "\r")
    if field is not None and field.quoted or any(mark in text for mark in marks):
        return '"' + text.replace('"', '""') + '"'
    return text


class CsvTable(MessageFile):
    """A .csv or .tsv file read for translation: its `texts` (once `for_direction` has chosen them)
    in, the table with their translations out (`write`)."""

    target_language = None  # (a table of several languages holds every one: the model's target is the one filled)

    def __init__(self, text: str, bom: bool, delimiter: str, records: list[_Record], name: str):
        self.text, self.bom, self.delimiter, self.records, self.name = text, bom, delimiter, records, name
        self.messages: list[_Cell] = []
        self.target_column: int | None = None  # a table of languages: the target's column
        self.added: tuple[int, str] | None = None  # a column added for the target: its number and name
        self.sources: dict[str, str] = {}  # a table of languages: each source text's fingerprint by its row's key
        self.kept_cells: list[tuple[_Record, _Field | None, str]] = []  # an earlier translation's texts kept (--update)
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "CsvTable":
        try:
            text = utf8_text(data, name)
        except NmtError as e:  # (Excel's "CSV (Comma delimited)" is written in the system's code page)
            raise NmtError(f"{e}: save the table as UTF-8 (Excel: \"CSV UTF-8\")" if "iconv" not in str(e) else
                           f"{e}, or save the table as UTF-8 (Excel: \"CSV UTF-8\")") from None
        delimiter = _delimiter(text, name)
        return cls(text, data.startswith(b"\xef\xbb\xbf"), delimiter, _records(text, delimiter, name), name)

    def for_direction(self, source: str | None, target: str, header: bool = True,
                      columns: list[str | int] = (), made_from: dict[str, str] | None = None,
                      earlier: "CsvTable | None" = None) -> "CsvTable":
        """The table made ready to translate from `source` (None: not known, the first language the
        first row names over a column but its first, other than the target) into `target`: a
        column of the source language's texts into the target's, else each cell of `columns` (or
        of every one) but the first row's where it is the `header`. `made_from`: what a folder's
        record says the target's cells were translated from (`made`), by key: a cell whose
        source text changed since is translated again. `earlier`: an earlier translation of the
        table (--update), whose target cells are kept by key where this table's are empty."""
        rows = [record for record in self.records if not record.blank]
        names = rows[0] if rows else None
        if source is None and names is not None:  # (not known: --src-lang auto) the first language the first row names
            source = next((code for code in _named_languages(names) if not code_match(target, code)), None)
        source_column = _column_of(names, source) if names is not None and source and not columns else None
        if source_column is not None:
            self._languages(rows, source_column, _column_of(names, target, other_than=source_column), target,
                            made_from or {}, earlier.translations(source, target) if earlier is not None else {})
        else:
            if not columns and names is not None and _named_languages(names):
                self.warnings.append(f"its first row names languages, but not {source}, the model's "
                                     "source: each cell translated in its place")
            self._cells(rows[1:] if header or columns else rows, self._chosen(names, list(columns)),
                        names if header or columns else None)
        return self

    def _languages(self, rows: list[_Record], source: int, target: int | None, language: str,
                   made_from: dict[str, str], kept: dict[str, str]) -> None:
        """Each row's text in the `source` column to translate into the `target` one (None: a column
        added, its name in the first row), but where the target's cell has one already, or an
        earlier translation has one for its key (`kept`), made from the text the source has now
        (`made_from`, by key)."""
        if target is None:
            target = max(len(row.fields) for row in rows)
            self.added = (target, _column_name(rows[0].fields[source].value, language))
        keys = _row_keys(rows[1:]) if source else [None] * (len(rows) - 1)
        changed = []
        for row, key in zip(rows[1:], keys):
            cell = row.fields[source] if source < len(row.fields) else None
            if cell is None or not cell.value.strip():
                continue
            if key is not None:  # (the key a folder's record knows the text by: the first column's, where unique)
                self.sources[key] = fingerprint(as_markup(cell.value))
            unchanged = key is None or made_from.get(key, self.sources[key]) == self.sources[key]
            if target < len(row.fields) and row.fields[target].value.strip():
                if unchanged:
                    continue
                changed.append(cell.line)  # (its translation made from another text)
            there = row.fields[target] if target < len(row.fields) else None
            if key in kept and unchanged:
                self.kept_cells.append((row, there, kept[key]))  # (an earlier translation's, as it stands)
                continue
            if key in kept:
                changed.append(cell.line)
            self.messages.append(_Cell.of(cell, there, row))
        self.target_column = target
        if changed:
            self.warnings.append(f"{len(changed)} text(s) translated again (line {some_lines(changed)}): their "
                                 f"source changed since their translation into {language}")

    def translations(self, source: str, target: str) -> dict[str, str]:
        """A table of languages' filled cells in the `target` column, by their rows' keys (--update)."""
        rows = [record for record in self.records if not record.blank]
        source_column = _column_of(rows[0], source) if rows and source else None
        target_column = _column_of(rows[0], target, other_than=source_column) if source_column is not None else None
        if target_column is None or not source_column:
            return {}
        return {key: row.fields[target_column].value for row, key in zip(rows[1:], _row_keys(rows[1:]))
                if key is not None and target_column < len(row.fields) and row.fields[target_column].value.strip()}

    def _chosen(self, names: _Record | None, columns: list[str | int]) -> set[int] | None:
        """The columns `decode.table_columns` names, by the first row's names or numbers from 1 (None: every one)."""
        if not columns:
            return None
        known = [field.value.strip() for field in names.fields] if names is not None else []
        chosen = set()
        for column in columns:
            wanted = str(column).strip()
            if wanted.isdigit() and int(wanted) >= 1:
                chosen.add(int(wanted) - 1)
            elif wanted in known or wanted.lower() in (lowered := [name.lower() for name in known]):
                chosen.add(known.index(wanted) if wanted in known else lowered.index(wanted.lower()))
            else:
                raise NmtError(f"decode.table_columns: {self.name} has no column {wanted!r} (its first row: "
                               f"{', '.join(map(repr, known))})")
        return chosen

    def _cells(self, rows: list[_Record], columns: set[int] | None, names: _Record | None = None) -> None:
        """Each cell of `rows` to translate, in `columns` (None: every column of text, one with a cell
        of two words or more; a column of single words, a state or a name a program reads, is
        copied, and a warning names it)."""
        cells: dict[int, list[_Cell]] = {}
        for row in rows:
            for index, field in enumerate(row.fields):
                if columns is not None and index not in columns or _DATA_WORD.fullmatch(field.value.strip()):
                    continue
                cell = _Cell.of(field, field, row)
                if cell.to_translate:
                    cells.setdefault(index, []).append(cell)
        words = {index for index, found in cells.items() if columns is not None or
                 any(len(_WORD.findall(cell.source.value)) > 1 for cell in found)}
        self.messages += sorted((cell for index in words for cell in cells[index]), key=lambda cell: cell.source.start)
        if single := sorted(set(cells) - words):
            named = [repr(names.fields[i].value) if names is not None and i < len(names.fields) else str(i + 1) for i in single]
            self.warnings.append(f"column(s) of single words left as they are (states, names, codes a program reads): "
                                 f"{', '.join(named)}; decode.table_columns names the columns to translate")

    def write(self, translations: list[str], target: str | None = None) -> bytes:
        """The table with each text's translation in its place (a column added where it had none for
        the target language), the rest as it was."""
        given, edits, filled = iter(translations), [], {}
        for row, there, text in self.kept_cells:
            if there is not None:
                edits.append((there.start, there.end, _written(text, self.delimiter, there)))
            else:
                filled[id(row)] = _written(text, self.delimiter, None)
        for cell in self.messages:
            text = cell.translation(given) if cell.to_translate else cell.source.value
            if cell.field is not None:
                if text != cell.field.value:  # (a cell that comes back as it was stays as it was written)
                    edits.append((cell.field.start, cell.field.end, _written(text, self.delimiter, cell.field)))
            else:  # (a cell added: quoted where the source's is)
                filled[id(cell.record)] = _written(text, self.delimiter, cell.source if cell.source.quoted else None)
        column = self.target_column
        rows = [record for record in self.records if not record.blank]
        for number, row in enumerate(rows):
            missing = column - len(row.fields) + 1 if column is not None else 0
            if missing <= 0:
                continue
            value = (_written(self.added[1], self.delimiter, None) if number == 0 and self.added
                     else filled.get(id(row), ""))
            if number and not value and self.added is None:
                continue  # (a short row of a column the table has: left short where nothing is put in it)
            edits.append((row.end, row.end, self.delimiter * missing + value))
        return (b"\xef\xbb\xbf" if self.bom else b"") + spliced(self.text, edits).encode("utf-8")


def names_languages(head: bytes, name: str) -> bool:
    """Whether a table whose first bytes are `head` names a language in its first row over a column
    other than its first (`keys,en`): a program's texts by language, which a folder's translation
    fills; other tables are data."""
    text = head.decode("utf-8-sig", errors="ignore")
    try:
        names = next((r for r in _records(text, _delimiter(text, name), name, 5) if not r.blank), None)
    except NmtError:  # (a quoted field longer than the head)
        return False
    return names is not None and bool(_named_languages(names))
